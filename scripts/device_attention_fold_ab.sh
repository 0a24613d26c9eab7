#!/usr/bin/env bash
# A/B on one GPU, one call: the row reductions' pairwise fold (argus/codegen/lower/exchange.py,
# 7dd7fd5) against the linear chain it replaced (scripts/ab/exchange_linear_fold.py, the file
# as of b0b93e9), each with the persistent grid (the non-causal default) and without it, on
# issue 16's non-causal shapes, decode and one causal shape. Every variant is checked for
# correctness on each shape before it is timed (attention_sweep.py); kernels are rebuilt per
# source (the kernel cache is keyed by the generated CUDA).
#   bash scripts/device_attention_fold_ab.sh   (carry [".whl"]; JSON in $OUT)
set -uo pipefail
source scripts/device_env.sh
SHAPES=${AB_SHAPES:-4x16x16x4096x4096x128,2x16x16x8192x8192x128,16x16x16x1024x1024x64,8x32x8x128x8192x128,4x16x16x4096x4096x128:bshd,4x16x16x4096x4096x128c}
run() { local t0=$SECONDS; echo "== $*"; timeout "$1" "${@:2}"; echo "rc=$? ($((SECONDS - t0))s)"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv || true
run 250 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-fold-tree.json" \
  --shapes "$SHAPES" --variants default,nopersist
cp scripts/ab/exchange_linear_fold.py argus/codegen/lower/exchange.py
run 250 python3 benchmarks/attention_sweep.py --out "$OUT/attention-sweep-fold-linear.json" \
  --shapes "$SHAPES" --variants default,nopersist
git checkout -q argus/codegen/lower/exchange.py 2>/dev/null || true
