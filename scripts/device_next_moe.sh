#!/usr/bin/env bash
# For the next session's first MoE call (issue 17): (1) the fine-grained layers (E = 64, k = 6)
# that never finished on the H200 (sessions 8 and 10) run launch by launch, each synchronised,
# so the log names the kernel that does not end; (2) the gate-up gather as generated now
# (the next row's index loaded before each box) timed on Mixtral T=512 and 4096.
#   bash scripts/device_next_moe.sh     (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
timeout 90 python3 scripts/device_moe_gather.py --one-by-one finegrained-tails --shapes "" --correct "" \
  --stack-after-s 60 --out "$OUT/moe-one-by-one.json" 2>&1 | tee "$OUT/moe-one-by-one.log" | tail -20
timeout 150 python3 scripts/device_moe_gather.py --shapes mixtral-512,mixtral-4096 --correct tails,all-to-one \
  --out "$OUT/moe-gather.json" 2>&1 | tee "$OUT/moe-gather.log" | tail -8
