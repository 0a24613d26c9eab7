#!/usr/bin/env bash
# Issue 17, the thirtieth session's measurements (none ran: no device was lent), in phases:
#   bash scripts/device_s30.sh [min|pdl|probe|bench|sanitize][,...]   (default: min)
#   min       (~3 min) the layer's correctness cases on this tree (strided walks, batched
#             expert scans: argus/codegen/lower/filtered_walk.py, filtered_loop.py); the
#             fine-grained T = 1 layer with and without the 64-wide decode tiles
#             (DECODE_TILE_RULE, the diagnosis's "tile rule"), and the s29 code in the same
#             run (ARGUS_FILTERED_WALK=0 ARGUS_FILTERED_LOOP=0)
#   pdl       the same layer under programmatic dependent launch (ARGUS_PDL=1)
#   probe     each decode GEMM alone on synthetic routings (scripts/device_moe_gemm_probe.py)
#             with both transforms, and its main variants without them
#   bench     the benchmark proper (every shape against both peers)
#   sanitize  memcheck and racecheck of the small layers (scripts/device_moe.sh)
# Carry [".whl"]; outputs in $OUT.
set -uo pipefail
source scripts/device_env.sh
LOG="$OUT/device_s30.log"
DIAG="python3 scripts/device_moe_decode_diag.py --shapes decode-finegrained-1"
PROBE="python3 scripts/device_moe_gemm_probe.py"
OLD="ARGUS_FILTERED_WALK=0 ARGUS_FILTERED_LOOP=0"
min() {
  TAIL=22 run 120 python3 benchmarks/moe.py --out "$OUT" --correctness
  TAIL=6 run 180 $DIAG --variants "default,tile rule,tile rule dn128,count kernel,graphs" --out "$OUT/new"
  TAIL=4 run 60 env $OLD $DIAG --variants "count kernel" --out "$OUT/old"
}
pdl() { TAIL=4 run 60 env ARGUS_PDL=1 $DIAG --variants default --out "$OUT/pdl"; }
probe() {
  TAIL=20 run 150 $PROBE --out "$OUT/probe-new"
  TAIL=8 run 90 env $OLD $PROBE --out "$OUT/probe-old" \
    --only "down,down E8,down hits0,gate_up,gate_up E8,gate_up hits0"
}
bench() {
  TAIL=4 run 150 python3 benchmarks/moe.py --out "$OUT" --prebuild
  TAIL=40 run 300 python3 benchmarks/moe.py --out "$OUT" --timing
}
sanitize() {
  bash scripts/device_moe.sh sanitize,racecheck 2>&1 |
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|finite|rc=|Error" | head -20
}
nvidia-smi --query-gpu=name --format=csv,noheader
for phase in $(echo "${1:-min}" | tr , ' '); do
  case "$phase" in
    min|pdl|probe|bench|sanitize) $phase ;;
    *) echo "usage: $0 [min|pdl|probe|bench|sanitize][,...]"; exit 2 ;;
  esac
done
python3 scripts/device_summary.py "$OUT"
