#!/usr/bin/env bash
# Thirtieth session, the second call (~8 minutes): the benchmark proper on this tree (every
# shape against both peers, decode bytes against the copy bandwidth), then memcheck and
# racecheck of the small layers (prefill; decode with 128- and 64-wide tiles).
# Carry [".whl"]; outputs in $OUT.
set -uo pipefail
source scripts/device_env.sh
LOG="$OUT/device_s30_final.log"
nvidia-smi --query-gpu=name --format=csv,noheader
TAIL=4 run 150 python3 benchmarks/moe.py --out "$OUT" --prebuild
TAIL=40 run 300 python3 benchmarks/moe.py --out "$OUT" --timing
bash scripts/device_moe.sh sanitize,racecheck 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|finite|rc=|Error" | head -20
