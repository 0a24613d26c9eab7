#!/usr/bin/env bash
# Nsight Compute on the MoE layer's decode launches (issue 17's decode bar: the expert weights
# read at >= 60% of the copy bandwidth): one profiled layer of Mixtral T=16 and fine-grained
# T=16 after warm-up, each moe_* kernel: speed of light, memory workload, warp stalls, launch
# statistics, occupancy.
#   bash scripts/device_moe_decode_ncu.sh   (carry [".whl"]; report in $OUT/ncu-moe-decode.txt)
#   NCU_SOURCE=1 bash scripts/device_moe_decode_ncu.sh   adds the source counters (the stall
#                                           reasons by line of the generated CUDA: -lineinfo)
set -uo pipefail
source scripts/device_env.sh      # OUT, the z3 wheel, PYTHONPATH, the kernel cache
cat > /tmp/moe_decode.py <<'PY'
import torch, argus.ops as ops
from argus.bench.moe_bench import SHAPES, make_inputs
for name in ("decode-mixtral-16", "decode-finegrained-16"):
    t, e, k, h, i = SHAPES[name]
    x, L, w13, w2 = make_inputs(torch, t, e, k, h, i, "random", 5, "cuda")
    for _ in range(3):
        ops.moe(x, L, w13, w2, k)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("decode")  # the profiled layer
    ops.moe(x, L, w13, w2, k)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
PY
timeout "${NCU_S:-200}" ncu --clock-control none --nvtx --nvtx-include "decode/" \
  --kernel-name regex:moe_ \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section LaunchStats --section Occupancy --section SchedulerStats \
  ${NCU_SOURCE:+--section SourceCounters --section WarpStateStats --print-details all} \
  python3 /tmp/moe_decode.py > "$OUT/ncu-moe-decode.txt" 2>&1
echo "ncu rc=$?"
grep -E "^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|Memory Throughput|Grid Size|Registers Per|Achieved Occupancy|Stall|Compute \(SM\)|L2 Hit|Mem Busy|Max Bandwidth" "$OUT/ncu-moe-decode.txt" | head -120
