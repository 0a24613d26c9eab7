#!/usr/bin/env bash
# Device call (issue 17, twenty-ninth session): why a decode k-step of the MoE GEMMs takes
# ~1.6 us whatever the tile width and ring depth (fine-grained T = 1).
#   1. the diagnosis (eager, host, graph, per-kernel GPU times) with this tree: default,
#      shallow rings (S = 2 on both GEMMs: does a step's time move with the ring's depth?),
#      the router's 1024-entry tiles (before), the 64-wide gate-up tile; fine-grained and
#      Mixtral T = 1;
#   2. ncu's stall samples per SASS instruction of moe_down and moe_gate_up (fix applied);
#   2b. programmatic dependent launch (ARGUS_PDL=1): the layer's GPU tests and its timing;
#   4. the benchmark's correctness cases (this tree).
# Run from the repo root through the device tool with carry [".whl"]; outputs in $OUT.
#   bash scripts/device_s29_moe.sh [diag,sass,pdl,correct]   (default: all; the four
#   take 6-10 minutes: split them over two calls where the call limit is 600 s)
set -uo pipefail
source scripts/device_env.sh
LOG="$OUT/device_s29_moe.log"
TAIL=14
SH="decode-finegrained-1,decode-mixtral-1"
PHASE="${1:-diag,sass,pdl,correct}"
diag() {
  run 240 python3 scripts/device_moe_decode_diag.py --variants "default,gu S2 + dn S2,route BS1024,gu BN64 S9" \
    --out "$OUT/fix" --shapes "$SH"
}
sass() {
  timeout 150 ncu --clock-control none --nvtx --nvtx-include "decode/" --kernel-name regex:"moe_(down|gate_up)" \
    --section SourceCounters --section WarpStateStats --section SpeedOfLight -f -o "$OUT/t1" \
    python3 scripts/moe_profiled_layer.py > "$OUT/ncu-run.txt" 2>&1
  echo "ncu rc=$?"; tail -2 "$OUT/ncu-run.txt"
  for kern in moe_down moe_gate_up; do
    timeout 60 ncu --import "$OUT/t1.ncu-rep" --kernel-name "$kern" --page source --print-source sass --csv \
      > "$OUT/sass-$kern.csv" 2>&1
    timeout 30 ncu --import "$OUT/t1.ncu-rep" --kernel-name "$kern" > "$OUT/details-$kern.txt" 2>&1
    grep -E "Duration|DRAM Throughput|Stall|Warp Cycles Per Issued" "$OUT/details-$kern.txt" | head -12
    echo "== $kern: $(wc -l < "$OUT/sass-$kern.csv") lines"
    python3 scripts/ncu_sass_hot.py "$OUT/sass-$kern.csv" 22
  done
}
pdl() {
  # programmatic dependent launch (ARGUS_PDL=1): the GPU tests of the layer, then its timing
  ARGUS_PDL=1 TAIL=6 run 120 python3 -m pytest -q -x -p no:cacheprovider -o addopts="" tests/ops/test_moe_gpu.py
  ARGUS_PDL=1 run 60 python3 scripts/device_moe_decode_diag.py --variants default --out "$OUT/pdl" \
    --shapes decode-finegrained-1,decode-mixtral-1
}
summary() {
python3 - "$OUT" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/*/moe-decode-diag-*.json")):
    for r in json.load(open(f))["rows"]:
        print(f.split("/")[-2], r["shape"], r["variant"], "eager", round(r.get("eager_us", 0), 1),
              "graph", round(r.get("graph_us", 0), 1), "host", round(r.get("host_us", 0), 1),
              "bw", round(r.get("bw_ratio_eager", 0), 3), r.get("kernels_us"), r.get("error", ""))
PY
}
correct() {
  # the benchmark's correctness cases (fp64 reference, empty and all-to-one experts, both
  # combine modes, the graph replay) on this tree; then memcheck: bash scripts/device_moe.sh sanitize
  TAIL=25 run 150 python3 benchmarks/moe.py --out "$OUT" --correctness
}
for phase in ${PHASE//,/ }; do
  case "$phase" in
    diag|sass|pdl|correct) $phase ;;
    *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
summary
