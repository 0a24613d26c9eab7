#!/usr/bin/env bash
# Thirtieth session, first call (~4 minutes): what sets the decode MoE GEMMs' time
# (scripts/device_moe_gemm_probe.py: each kernel alone on synthetic routings), then the
# fine-grained T = 1 layer with the 64-wide gate-up tile (132 items on 132 SMs) and with
# programmatic dependent launch (ARGUS_PDL=1), each against the default in the same call.
# Carry [".whl"]; outputs in $OUT.
set -uo pipefail
source scripts/device_env.sh
LOG="$OUT/device_s30_probe.log"
nvidia-smi --query-gpu=name --format=csv,noheader
TAIL=30 run 240 python3 scripts/device_moe_gemm_probe.py --out "$OUT"
TAIL=4 run 120 python3 scripts/device_moe_decode_diag.py --variants "default,gate_up BN64" \
  --out "$OUT/cfg" --shapes decode-finegrained-1
ARGUS_PDL=1 TAIL=4 run 90 python3 scripts/device_moe_decode_diag.py --variants "default,gate_up BN64" \
  --out "$OUT/pdl" --shapes decode-finegrained-1
python3 - "$OUT" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*/moe-decode-diag-*.json")):
    for r in json.load(open(f))["rows"]:
        print(f.split("/")[-2], r["shape"], r["variant"], "eager", round(r.get("eager_us", 0), 1),
              "graph", round(r.get("graph_us", 0), 1), "host", round(r.get("host_us", 0), 1),
              "bw", round(r.get("bw_ratio_eager", 0), 3), "err", r.get("rel_error"),
              r.get("kernels_us"), r.get("error", ""))
PY
