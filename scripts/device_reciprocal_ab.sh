#!/usr/bin/env bash
# attention's output normalised as o * (1 / l) (one reciprocal a row, twenty-fourth session)
# against o / l (an IEEE division an element: the one line edited back by sed), A B A B on
# five shapes in one call; then the attention benchmark, compute-sanitizer memcheck /
# racecheck on attention_sanitize.py's cases (the code generator's wgmma descriptors changed
# this session too), d = 64's tile variants, and a seeded random draw. Carry [".whl"].
source scripts/device_env.sh
SH=16x16x16x1024x1024x64,4x16x16x4096x4096x64,8x16x16x2048x2048x64c,4x16x16x4096x4096x128,4x16x16x4096x4096x128c
ab_rounds reciprocal div rcp "$SH" argus/kernels/attention.py \
  sed -i 's|out = cast(o_acc \* (1.0 / l_i), DT)|out = cast(o_acc / l_i, DT)|' argus/kernels/attention.py
timeout 150 python3 -m argus.cli.main bench attention --out "$OUT/attention-bench.json" 2>&1 | grep "timing\|summary\|not ok"
for tool in memcheck racecheck; do
  timeout 80 compute-sanitizer --tool "$tool" --report-api-errors no python3 benchmarks/attention_sanitize.py 2>&1 | tail -3
done
timeout 100 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-d64-after.json" \
  --shapes 16x16x16x1024x1024x64,8x16x16x2048x2048x64c \
  --variants default,persist_wgs3,causal_wgs2,persist_causal_wgs3 2>&1 | pick
timeout 200 python3 -m argus.cli.main bench attention --random 24 --seed "${SEED:-2411}" --out "$OUT/attention-random.json" 2>&1 | grep "summary\|not ok"
