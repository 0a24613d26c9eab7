"""One launch of the DSL GEMM and one of torch.matmul (cuBLAS) on the same inputs, between
cudaProfilerStart/Stop, for Nsight Compute:

    ncu --clock-control none --profile-from-start off --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section WarpStateStats \
        python benchmarks/gemm_profile.py 4096x4096x4096 kn [KNOBS_JSON]

Warm-up launches (build, tensor maps, cuBLAS heuristics) run before the profiled range.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    import torch

    from argus.ops import matmul

    m, n, k = (int(v) for v in sys.argv[1].split("x"))
    layout = sys.argv[2] if len(sys.argv) > 2 else "kn"
    knobs = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = (torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if layout == "kn"
         else torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t())
    for _ in range(3):
        matmul(a, b, **knobs)
        torch.matmul(a, b)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    matmul(a, b, **knobs)
    torch.matmul(a, b)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
