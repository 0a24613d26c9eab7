#!/usr/bin/env bash
# The short form of scripts/device_s29_moe.sh for a call of ~5 minutes: the benchmark's
# correctness cases on this tree, the decode diagnosis (default and the router's old
# 1024-entry tiles) on fine-grained T = 1. (The twenty-ninth session also ran the default
# with its gather fix reverted, from a patch since removed: no difference, docs/perf-log.md.)
# Carry [".whl"]; outputs in $OUT.
set -uo pipefail
source scripts/device_env.sh
LOG="$OUT/device_s29_short.log"
nvidia-smi --query-gpu=name --format=csv,noheader
TAIL=22 run 90 python3 benchmarks/moe.py --out "$OUT" --correctness
TAIL=4 run 80 python3 scripts/device_moe_decode_diag.py --variants "default,route BS1024" \
  --out "$OUT/fix" --shapes decode-finegrained-1
python3 scripts/device_summary.py "$OUT"
