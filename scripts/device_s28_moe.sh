#!/usr/bin/env bash
# Device call (issue 17, twenty-eighth session): the MoE layer's host path (moe_calls.py).
#   bash scripts/device_s28_moe.sh [tests|diag|bench|ncu][,...]   (default: all four)
#   tests  the new GPU tests (tests/ops/test_moe_gpu.py) and the matmul host test
#   diag   scripts/device_moe_decode_diag.py on the decode shapes (eager, host, graph,
#          per-kernel times) and the host profile of one decode layer
#   bench  benchmarks/moe.py --timing (every shape against both peers)
#   ncu    Nsight Compute on the fine-grained T = 1 layer's GEMMs (why a k-step takes
#          ~1.7 us whatever the tile width)
# Run from the repo root through the device tool with carry [".whl"]; outputs in $OUT.
set -uo pipefail
source scripts/device_env.sh
LOG="$OUT/device_s28_moe.log"
TAIL=30
PHASE="${1:-tests,diag,bench,ncu}"
tests() { run 300 python3 -m pytest -q -x -p no:cacheprovider -o addopts="" tests/ops/test_moe_gpu.py; }
diag() {
  run 240 python3 scripts/device_moe_decode_diag.py --variants default --out "$OUT" \
    --shapes decode-finegrained-1,decode-mixtral-1,decode-finegrained-16,decode-finegrained-64 \
    --extra "fg-bytes-e8=1:8:6:2048:1408,fg-bytes-e128=1:128:6:2048:1408"
  TAIL=12 run 120 python3 scripts/device_moe_host_profile.py "$OUT/moe-host-profile.json"
}
bench() { run 200 python3 benchmarks/moe.py --out "$OUT" --prebuild; run 300 python3 benchmarks/moe.py --out "$OUT" --timing; }
ncu_gemms() {
    timeout 200 ncu --clock-control none --nvtx --nvtx-include "decode/" \
    --kernel-name regex:"moe_(gate_up|down|place)" \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section LaunchStats --section Occupancy --section SchedulerStats \
    python3 scripts/moe_profiled_layer.py > "$OUT/ncu-moe-t1.txt" 2>&1
  echo "ncu rc=$?"
  grep -E "^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Stall|Compute \(SM\)|L2 Hit|Mem Busy|Max Bandwidth|Warp Cycles Per Issued|Issued Warp" "$OUT/ncu-moe-t1.txt" | head -80
}
for phase in ${PHASE//,/ }; do
  case "$phase" in
    tests|diag|bench) $phase ;;
    ncu) ncu_gemms ;;
    *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
