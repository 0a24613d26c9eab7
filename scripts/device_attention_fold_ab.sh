#!/usr/bin/env bash
# A/B on one GPU, one call: the row reductions' in-thread fold as the tree has it
# (argus/codegen/lower/exchange.py) against other versions of its functions (AB_FILE, spliced
# over them by scripts/ab/splice.py; named AB_NAME), on issue 16's shapes. Every variant is
# checked for correctness on each shape before it is timed (attention_sweep.py); kernels are
# rebuilt per source (the kernel cache is keyed by the generated CUDA), and the two are
# timed in alternation (ROUNDS, default 2).
#   AB_FILE=scripts/ab/fold4.py AB_NAME=fold4 bash scripts/device_attention_fold_ab.sh
# The first A/B (7dd7fd5's pairwise fold in the tree against the linear chain of b0b93e9, with
# and without the persistent grid) swapped in that whole file, with
# AB_VARIANTS=default,nopersist.   (carry [".whl"]; JSON in $OUT)
set -uo pipefail
source scripts/device_env.sh
SHAPES=${AB_SHAPES:-4x16x16x4096x4096x128,2x16x16x8192x8192x128,16x16x16x1024x1024x64,8x32x8x128x8192x128,8x16x16x2048x2048x64c,4x16x16x4096x4096x128c}
AB_FILE=${AB_FILE:?name the functions to splice in, e.g. AB_FILE=scripts/ab/fold4.py}
AB_NAME=${AB_NAME:-b}
VARIANTS=${AB_VARIANTS:-default}
run() { local t0=$SECONDS; echo "== $*"; timeout "$1" "${@:2}"; echo "rc=$? ($((SECONDS - t0))s)"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv || true
# ROUNDS alternations of the two (A B A B ...): the second round finds both builds in the
# kernel cache and mostly times, so a drift of the GPU over the call shows as a difference
# between rounds of one variant, not as one between the variants
cp argus/codegen/lower/exchange.py /tmp/exchange-current.py
cp argus/codegen/lower/exchange.py /tmp/exchange-b.py
python3 scripts/ab/splice.py /tmp/exchange-b.py "$AB_FILE" || exit 1
for r in $(seq 1 "${ROUNDS:-2}"); do
  cp /tmp/exchange-current.py argus/codegen/lower/exchange.py
  run 200 python3 benchmarks/attention_sweep.py \
    --out "$OUT/attention-sweep-fold-current-r$r.json" --shapes "$SHAPES" --variants "$VARIANTS"
  cp /tmp/exchange-b.py argus/codegen/lower/exchange.py
  run 200 python3 benchmarks/attention_sweep.py \
    --out "$OUT/attention-sweep-fold-$AB_NAME-r$r.json" --shapes "$SHAPES" --variants "$VARIANTS"
done
cp /tmp/exchange-current.py argus/codegen/lower/exchange.py
