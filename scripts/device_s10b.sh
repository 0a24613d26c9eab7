#!/usr/bin/env bash
# The tenth session's second H200 call, phases in priority order, each bounded so the call
# ends inside 590 s: (1) the GEMM op benchmark on seed 7 and a fresh seed (issue 18, after
# the row-strided-view fix); (2) the attention planner, smoke then three shapes (issue 20);
# (3) the MoE layer's launches timed alone (issue 17); (4) ncu on two decode GEMMs.
#   bash scripts/device_s10b.sh     (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((${1:-590} - (SECONDS - T0))); }
( SEED=7 BUDGET_S=80 OP_S=100 bash scripts/device_gemm_call.sh op ) > "$OUT/op7.log" 2>&1
grep -A12 '"random_geomean' "$OUT/op7.log" | head -14; grep -c ERROR "$OUT/op7.log"
( SEED="${NEW_SEED:-29}" BUDGET_S=80 OP_S=100 bash scripts/device_gemm_call.sh op ) > "$OUT/op-new.log" 2>&1
grep -A12 '"random_geomean' "$OUT/op-new.log" | head -14; grep -c ERROR "$OUT/op-new.log"
echo "gemm done ($((SECONDS - T0)) s)"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 ARGUS_CACHE_DIR=/tmp/argus-cache
timeout 90 python3 scripts/device_attention_planner.py --shapes 1x2x2x256x256x64 \
  --deadline-s 20 --out "$OUT/planner-smoke.json" > "$OUT/planner-smoke.log" 2>&1
echo "smoke rc=$? ($((SECONDS - T0)) s)"; tail -3 "$OUT/planner-smoke.log"
if grep -q "planner_ratio per shape: [0-9]" "$OUT/planner-smoke.log"; then
  L=$(left 420)
  DEADLINE_S=$((L - 100)) timeout "$L" bash scripts/device_attention_planner.sh > "$OUT/planner-run.log" 2>&1
  grep -E "planner .* ms in|exhaustive best|planner_ratio per|FAILED|rc=" "$OUT/planner-run.log"
fi
echo "planner done ($((SECONDS - T0)) s)"
L=$(left 540); [ "$L" -gt 60 ] && timeout "$L" bash scripts/device_moe.sh breakdown > "$OUT/moe-breakdown.log" 2>&1
tail -25 "$OUT/moe-breakdown.log" 2>/dev/null
echo "moe done ($((SECONDS - T0)) s)"
L=$(left 590); [ "$L" -gt 40 ] && NCU_S=$((L - 5)) bash scripts/device_decode_ncu.sh
echo "call done ($((SECONDS - T0)) s)"
