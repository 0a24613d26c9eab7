#!/usr/bin/env bash
# Nsight Compute on the library attention (issue 16: 0.82 of cuDNN, d = 64 the weakest): one
# profiled launch each of (4, 16, 4096, 128) and (16, 16, 1024, 64), non-causal, bhsd, after
# warm-up, and SDPA's cuDNN kernel on the same inputs: speed of light, the pipes' utilisation
# (tensor, XU = MUFU exp2, FMA, ALU), warp stalls, scheduler issue rate, instruction mix.
#   bash scripts/device_attention_ncu.sh   (carry [".whl"]; report in $OUT/ncu-attention.txt)
#   NCU_SOURCE=1 ...                        adds the source counters (stalls by SASS line);
#                                           the stall reasons per issued instruction always
#   NCU_SHAPES="64,16,331,128 4,16,4096,128" ... other (B, H, S, D) shapes (the short-sequence
#                                           class: where the rest of its time goes)
set -uo pipefail
source scripts/device_env.sh      # OUT, the z3 wheel, PYTHONPATH, the kernel cache
cat > /tmp/attention_ncu.py <<'PY'
import os, torch, argus.ops as ops
from torch.nn.attention import SDPBackend, sdpa_kernel
torch.manual_seed(0)
shapes = [tuple(int(x) for x in s.split(",")) for s in
          os.environ.get("NCU_SHAPES", "4,16,4096,128 16,16,1024,64").split()]
for b, h, s, d in shapes:
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    for _ in range(3):
        ops.attention(q, k, v)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("profiled")
    ops.attention(q, k, v)
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        torch.nn.functional.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
PY
timeout "${NCU_S:-300}" ncu --clock-control none --nvtx --nvtx-include "profiled/" \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
  --section SchedulerStats --section InstructionStats --section LaunchStats --section Occupancy \
  --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_active.avg,"regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
  ${NCU_SOURCE:+--section SourceCounters --print-details all} \
  python3 /tmp/attention_ncu.py > "$OUT/ncu-attention.txt" 2>&1
echo "ncu rc=$?"
grep -E "^  [A-Za-z_0-9]+.*\(|issue_stalled|Duration|Registers Per|Achieved Occupancy|Stall|Compute \(SM\)|Issue Slots|Issued Ipc|No Eligible|Eligible Warps|pct_of_peak|inst_executed.sum|cycles_active|Warp Cycles Per Issued|Executed Ipc" "$OUT/ncu-attention.txt" | head -150
