#!/usr/bin/env bash
# exp2's polynomial share (EXP2_POLY, docs/perf-log.md twenty-fourth session) on the device:
# the d = 64 rows of issue 16 and a d = 128 control against the default and 192-row tiles,
# then tests/codegen/math_ulp.cu (every wrapper over all 2^32 inputs, argus::exp2_poly
# included). From the repo root through the device tool with carry [".whl"].
source scripts/device_env.sh
timeout 330 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-poly-d64.json" \
  --shapes 16x16x16x1024x1024x64,4x16x16x4096x4096x64,8x16x16x2048x2048x64c \
  --variants default,poly2,poly4,poly8,persist_wgs3,persist_wgs3_poly4 2>&1 | pick
timeout 100 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-poly-d128.json" \
  --shapes 4x16x16x4096x4096x128 --variants default,poly4,poly8 2>&1 | pick
nvcc -O3 -arch=sm_90a -Iargus/codegen/include -o /tmp/mu tests/codegen/math_ulp.cu &&
  timeout 120 /tmp/mu > "$OUT/math_ulp.txt" 2>&1
echo "math_ulp rc=$?"; cat "$OUT/math_ulp.txt" | head -30
