#!/usr/bin/env bash
# The tenth session's third H200 call: the attention planner on three shapes (issue 20;
# the smoke of the second call showed the planner's path working), then, in what is left,
# ncu on two decode GEMMs (issue 18).   bash scripts/device_s10c.sh   (carry [".whl"])
set -uo pipefail
OUT="${OUT:-out/device}"; mkdir -p "$OUT"
T0=$SECONDS
DEADLINE_S=400 timeout 530 bash scripts/device_attention_planner.sh > "$OUT/planner-run.log" 2>&1
grep -E "planner .* ms in|exhaustive best|planner_ratio per|FAILED|rc=|built" "$OUT/planner-run.log"
echo "planner done ($((SECONDS - T0)) s)"
L=$((585 - (SECONDS - T0))); [ "$L" -gt 40 ] && NCU_S=$((L - 5)) bash scripts/device_decode_ncu.sh
echo "call done ($((SECONDS - T0)) s)"
