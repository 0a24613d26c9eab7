#!/usr/bin/env bash
# The wgmma descriptors of a tile's k steps as one descriptor plus offsets
# (smem_descriptor_at, twenty-fourth session) against the code generator before it, on
# the same machine in one call: attention's default on five shapes with the old
# argus/codegen/lower/wgmma.py (scripts/ab/wgmma_before_descriptor_at.py), then the new
# (twice, old again between: A B A B), then the attention benchmark and the GEMM
# benchmark shapes on the new one. From the repo root with carry [".whl"].
source scripts/device_env.sh
pick() { grep -o '"shape": "[^"]*"\|ratio_cudnn": [0-9.]*\|"argus_ms": [0-9.]*\|"error.*'; }
SH=16x16x16x1024x1024x64,4x16x16x4096x4096x64,8x16x16x2048x2048x64c,4x16x16x4096x4096x128,4x16x16x4096x4096x128c
cp argus/codegen/lower/wgmma.py /tmp/wgmma-new.py
for round in a b; do
  cp scripts/ab/wgmma_before_descriptor_at.py argus/codegen/lower/wgmma.py
  echo "== old $round"; timeout 120 python3 benchmarks/attention_sweep.py --out "$OUT/ab-old-$round.json" --shapes $SH --variants default 2>&1 | pick
  cp /tmp/wgmma-new.py argus/codegen/lower/wgmma.py
  echo "== new $round"; timeout 120 python3 benchmarks/attention_sweep.py --out "$OUT/ab-new-$round.json" --shapes $SH --variants default 2>&1 | pick
done
timeout 150 python3 -m argus.cli.main bench attention --out "$OUT/attention-bench.json" 2>&1 | grep "timing\|summary\|not ok"
timeout 150 python3 benchmarks/gemm_op.py --random 0 --bench --budget-s 120 --out "$OUT/gemm-bench.json" 2>&1 | tail -15
