#!/usr/bin/env bash
# The tenth session's fourth H200 call (issue 17): the gate-up gather with its row indices
# read 1, 4 or 16 at a time (scripts/device_moe_gather.py).  (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader; timeout "${GATHER_S:-420}" python3 scripts/device_moe_gather.py --out "$OUT/moe-gather.json" --shapes mixtral-512 --stack-after-s 120 2>&1 | tee "$OUT/moe-gather.log" | grep -v "^  warn"
echo "rc=${PIPESTATUS[0]}"
