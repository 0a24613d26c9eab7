#!/usr/bin/env bash
# attention's output normalised as o * (1 / l) (one reciprocal a row, twenty-fourth session)
# against o / l (an IEEE division an element: scripts/ab/attention_before_reciprocal.py), A B
# A B on five shapes in one call; then the attention benchmark, a seeded random draw, and
# compute-sanitizer memcheck / racecheck on attention_sanitize.py's cases (the code
# generator's wgmma descriptors changed this session too). Carry [".whl"].
source scripts/device_env.sh
pick() { grep -o '"shape": "[^"]*"\|ratio_cudnn": [0-9.]*\|"argus_ms": [0-9.]*\|"error.*'; }
SH=16x16x16x1024x1024x64,4x16x16x4096x4096x64,8x16x16x2048x2048x64c,4x16x16x4096x4096x128,4x16x16x4096x4096x128c
cp argus/kernels/attention.py /tmp/attention-new.py
for round in a b; do
  cp scripts/ab/attention_before_reciprocal.py argus/kernels/attention.py
  echo "== div $round"; timeout 120 python3 benchmarks/attention_sweep.py --out "$OUT/ab-div-$round.json" --shapes $SH --variants default 2>&1 | pick
  cp /tmp/attention-new.py argus/kernels/attention.py
  echo "== rcp $round"; timeout 120 python3 benchmarks/attention_sweep.py --out "$OUT/ab-rcp-$round.json" --shapes $SH --variants default 2>&1 | pick
done
timeout 150 python3 -m argus.cli.main bench attention --out "$OUT/attention-bench.json" 2>&1 | grep "timing\|summary\|not ok"
for tool in memcheck racecheck; do
  timeout 80 compute-sanitizer --tool "$tool" --report-api-errors no python3 benchmarks/attention_sanitize.py 2>&1 | tail -3
done
timeout 100 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-d64-after.json" \
  --shapes 16x16x16x1024x1024x64,8x16x16x2048x2048x64c \
  --variants default,persist_wgs3,causal_wgs2,persist_causal_wgs3 2>&1 | pick
timeout 200 python3 -m argus.cli.main bench attention --random 24 --seed "${SEED:-2411}" --out "$OUT/attention-random.json" 2>&1 | grep "summary\|not ok"
