#!/usr/bin/env bash
# The wgmma descriptors of a tile's k steps as one descriptor plus offsets
# (smem_descriptor_at, twenty-fourth session) against each step's own descriptor
# (scripts/ab/descriptor_per_step.py spliced over wgmma.py's _descriptor), A B A B on five
# shapes in one call; then the attention benchmark and the GEMM benchmark shapes on the new
# code. From the repo root with carry [".whl"].
source scripts/device_env.sh
SH=16x16x16x1024x1024x64,4x16x16x4096x4096x64,8x16x16x2048x2048x64c,4x16x16x4096x4096x128,4x16x16x4096x4096x128c
ab_rounds descriptor old new "$SH" argus/codegen/lower/wgmma.py \
  python3 scripts/ab/splice.py argus/codegen/lower/wgmma.py scripts/ab/descriptor_per_step.py
timeout 150 python3 -m argus.cli.main bench attention --out "$OUT/attention-bench.json" 2>&1 | grep "timing\|summary\|not ok"
timeout 150 python3 benchmarks/gemm_op.py --random 0 --bench --budget-s 120 --out "$OUT/gemm-bench.json" 2>&1 | tail -15
