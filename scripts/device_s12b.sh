#!/usr/bin/env bash
# The twelfth session's second H200 call (issue 17): the down GEMM's E = 64 hang narrowed: more
# expert counts and block counts in release builds; the hanging configurations in debug builds
# with a short wait bound (a stuck wait traps naming barrier, block, thread); the layer in a
# release build.
#   bash scripts/device_s12b.sh     (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
P=scripts/device_moe_down_probe.py
timeout 200 python3 $P --part down --timeout 20 --only e48-full,e40-full,e64-full-blocks128,e64-full-blocks66,e64-full-blocks32,e32-full-blocks16 \
  --out "$OUT/probe-release.json" 2>&1 | cut -c1-1200 | tee "$OUT/probe-release.log"
ARGUS_DEBUG=1 ARGUS_DEBUG_WAIT_LIMIT=200000 timeout 100 python3 $P --part down --only e64-full,e64-zeros \
  --timeout 40 --out "$OUT/probe-debug.json" 2>&1 | cut -c1-3000 | tee "$OUT/probe-debug.log"
timeout 40 python3 $P --part layer --timeout 30 --out "$OUT/probe-layer-release.json" 2>&1 | cut -c1-1500 | tee "$OUT/probe-layer-release.log"
