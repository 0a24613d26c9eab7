#!/usr/bin/env bash
# The twelfth session's last H200 call: every producer loop inside one elect_one (the form the
# A/B call measured fastest and race-free): the GEMM's eight shapes (nk, bf16) and the library
# attention's benchmark, each against its peer in the same run.
#   bash scripts/device_s12e.sh   (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
touch "$OUT/stamp"
timeout 110 python3 -m argus.cli.main bench gemm --timing --dtypes bf16 --layouts nk > "$OUT/gemm8.log" 2>&1; echo "gemm rc=$?"
grep -E "^timing|geomean" "$OUT/gemm8.log"
find benchmarks/results -maxdepth 1 -newer "$OUT/stamp" -name '*.json' -exec cp {} "$OUT"/ \;
OUT="$OUT/attention" timeout 70 bash scripts/device_attention.sh c > "$OUT/attention-c.log" 2>&1; grep -E "^timing|summary" "$OUT/attention-c.log"
