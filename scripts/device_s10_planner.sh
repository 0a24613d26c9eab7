#!/usr/bin/env bash
# The tenth session's first H200 call (issue 20's last item): a smoke run of the attention
# planner script on one tiny shape, then the full three-shape run within what is left of the
# call; if the smoke fails, the call falls back to the GEMM op benchmark on seed 7 (issue 18)
# so the machine's time is not lost.   bash scripts/device_s10_planner.sh   (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export ARGUS_CACHE_DIR="${ARGUS_CACHE_DIR:-/tmp/argus-cache}"
T0=$SECONDS
timeout 100 python3 scripts/device_attention_planner.py --shapes 1x2x2x256x256x64 \
  --deadline-s 30 --out "$OUT/planner-smoke.json" > "$OUT/planner-smoke.log" 2>&1
src=$?
tail -5 "$OUT/planner-smoke.log"
echo "smoke rc=$src ($((SECONDS - T0)) s)"
if [ "$src" -le 1 ] && grep -q "planner_ratio per shape: [0-9]" "$OUT/planner-smoke.log"; then
  LEFT=$((575 - (SECONDS - T0)))
  DEADLINE_S=$((LEFT - 110)) timeout "$LEFT" bash scripts/device_attention_planner.sh
else
  echo "smoke failed: the GEMM op benchmark instead"
  SEED=7 BUDGET_S=250 OP_S=300 bash scripts/device_gemm_call.sh op
fi
echo "call done ($((SECONDS - T0)) s)"
