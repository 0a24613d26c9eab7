#!/usr/bin/env bash
# The ninth session's first H200 call (issue 18): the GEMM op benchmark with the row-pitch
# model and repacking on seed 7 (the draw of the last note) and on a fresh seed, then a
# configuration sweep on two new training seeds for the model's refit. Phases write under
# $OUT as they go.   bash scripts/device_s9_gemm.sh   (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
( SEED=7 BUDGET_S=190 OP_S=220 bash scripts/device_gemm_call.sh op ) > "$OUT/op7.log" 2>&1
grep -A12 '"random_geomean' "$OUT/op7.log" | head -14
( SEED="${NEW_SEED:-29}" BUDGET_S=150 OP_S=180 bash scripts/device_gemm_call.sh op ) > "$OUT/op-new.log" 2>&1
grep -A12 '"random_geomean' "$OUT/op-new.log" | head -14
( SEEDS=13,14 COUNT=12 BUDGET_S=150 SWEEP_S=170 bash scripts/device_gemm_call.sh sweep ) > "$OUT/sweep.log" 2>&1
tail -3 "$OUT/sweep.log"
