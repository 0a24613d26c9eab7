#!/usr/bin/env bash
# Thirtieth session (~6 minutes): the layer's correctness cases on this tree (the filtered
# walks now strided, argus/codegen/lower/filtered_walk.py, and the expert scans' filters
# evaluated 32 ahead, filtered_loop.py); what sets the decode MoE GEMMs'
# time (scripts/device_moe_gemm_probe.py: each kernel alone on synthetic routings) with the
# two transforms, as written (ARGUS_FILTERED_WALK=0 ARGUS_FILTERED_LOOP=0) and with the walk
# only; then the
# fine-grained T = 1 layer: strided, as written, the 64-wide gate-up tile, and programmatic
# dependent launch (ARGUS_PDL=1).  Carry [".whl"]; outputs in $OUT.
set -uo pipefail
source scripts/device_env.sh
LOG="$OUT/device_s30_probe.log"
nvidia-smi --query-gpu=name --format=csv,noheader
TAIL=22 run 120 python3 benchmarks/moe.py --out "$OUT" --correctness
TAIL=20 run 150 python3 scripts/device_moe_gemm_probe.py --out "$OUT/strided"
ARGUS_FILTERED_WALK=0 ARGUS_FILTERED_LOOP=0 TAIL=8 run 90 python3 scripts/device_moe_gemm_probe.py \
  --out "$OUT/written" --only "down,down E8,down hits0,gate_up,gate_up E8,gate_up hits0"
ARGUS_FILTERED_LOOP=0 TAIL=8 run 60 python3 scripts/device_moe_gemm_probe.py \
  --out "$OUT/walkonly" --only "down,down hits0,gate_up,gate_up hits0"
TAIL=4 run 150 python3 scripts/device_moe_decode_diag.py --variants "default,tile rule" \
  --out "$OUT/strided" --shapes decode-finegrained-1,decode-mixtral-1
TAIL=4 run 60 python3 scripts/device_moe_decode_diag.py --variants "default" \
  --out "$OUT/strided16" --shapes decode-finegrained-16
ARGUS_FILTERED_WALK=0 ARGUS_FILTERED_LOOP=0 TAIL=4 run 80 python3 scripts/device_moe_decode_diag.py --variants "default" \
  --out "$OUT/written" --shapes decode-finegrained-1
ARGUS_PDL=1 TAIL=4 run 80 python3 scripts/device_moe_decode_diag.py --variants "default" \
  --out "$OUT/pdl" --shapes decode-finegrained-1
python3 - "$OUT" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*/moe-decode-diag-*.json")):
    for r in json.load(open(f))["rows"]:
        print(f.split("/")[-2], r["shape"], r["variant"], "eager", round(r.get("eager_us", 0), 1),
              "graph", round(r.get("graph_us", 0), 1), "host", round(r.get("host_us", 0), 1),
              "bw", round(r.get("bw_ratio_eager", 0), 3), "err", r.get("rel_error"),
              r.get("kernels_us"), r.get("error", ""))
for f in sorted(glob.glob(sys.argv[1] + "/*/moe-gemm-probe-*.json")):
    for r in json.load(open(f))["rows"]:
        print(f.split("/")[-2], r["variant"], r.get("us"), r.get("ok"), r.get("bw_ratio"), r.get("error", ""))
PY
