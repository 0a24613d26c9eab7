#!/usr/bin/env bash
# Thirtieth session, everything in one call (~9 minutes) when the device is scarce: the
# layer's correctness cases; fine-grained T = 1 on this tree (strided walks, batched expert
# scans) with and without the 64-wide decode tiles (DECODE_TILE_RULE), and the old code
# (ARGUS_FILTERED_WALK=0 ARGUS_FILTERED_LOOP=0: the s29 layer).
# ARGUS_PDL=1; the decode GEMMs alone (a probe subset); then the benchmark proper.
# Carry [".whl"]; outputs in $OUT.
set -uo pipefail
source scripts/device_env.sh
LOG="$OUT/device_s30_one.log"
nvidia-smi --query-gpu=name --format=csv,noheader
TAIL=22 run 120 python3 benchmarks/moe.py --out "$OUT" --correctness
TAIL=4 run 90 python3 scripts/device_moe_decode_diag.py --variants "default,tile rule" \
  --out "$OUT/new" --shapes decode-finegrained-1
ARGUS_FILTERED_WALK=0 ARGUS_FILTERED_LOOP=0 TAIL=4 run 60 python3 scripts/device_moe_decode_diag.py \
  --variants "default" --out "$OUT/old" --shapes decode-finegrained-1
ARGUS_PDL=1 TAIL=4 run 60 python3 scripts/device_moe_decode_diag.py --variants "default" \
  --out "$OUT/pdl" --shapes decode-finegrained-1
TAIL=8 run 60 python3 scripts/device_moe_gemm_probe.py --out "$OUT/new" \
  --only "down,down hits0,down E8,gate_up BN64 S8,gate_up hits0"
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
TAIL=4 run 120 python3 benchmarks/moe.py --out "$OUT" --prebuild
TAIL=40 run 240 python3 benchmarks/moe.py --out "$OUT" --timing
