#!/usr/bin/env bash
# The twelfth session's first H200 call (issue 17): (1) the down GEMM alone on synthetic
# routings, one configuration a child process (which E, routing or knob makes it hang), release
# builds; (2) the finegrained-tails layer launch by launch in a debug build (a stuck wait traps
# naming barrier, block, thread), each intermediate checked; the down hang variant in debug too;
# (3) the gate-up gather as generated now (16 indices a batch) on Mixtral T=512 and 4096.
#   bash scripts/device_s12a.sh     (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 240 python3 scripts/device_moe_down_probe.py --part down --timeout 30 \
  --out "$OUT/moe-down-probe.json" 2>&1 | cut -c1-1200 | tee "$OUT/moe-down-probe.log"
ARGUS_DEBUG=1 timeout 100 python3 scripts/device_moe_down_probe.py --part all --only e64-zeros \
  --timeout 45 --out "$OUT/moe-down-probe-debug.json" 2>&1 | cut -c1-2500 | tee "$OUT/moe-down-probe-debug.log"
timeout 150 python3 scripts/device_moe_gather.py --shapes mixtral-512,mixtral-4096 --correct tails,all-to-one \
  --out "$OUT/moe-gather.json" 2>&1 | tee "$OUT/moe-gather.log" | tail -8
