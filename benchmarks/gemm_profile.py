"""One launch of the DSL GEMM and one of torch.matmul (cuBLAS) on the same inputs, between
cudaProfilerStart/Stop, for Nsight Compute:

    ncu --clock-control none --profile-from-start off --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section WarpStateStats \
        python benchmarks/gemm_profile.py 4096x4096x4096 kn [KNOBS_JSON] [LAUNCHES]

Warm-up launches (build, tensor maps, cuBLAS heuristics) run before the profiled range.
With LAUNCHES > 1 the range holds that many pairs, each after an L2 flush (a 256 MB
write), to see how much one launch differs from the next (per-launch metrics with
`ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,...`).
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
    launches = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    if launches < 1:
        print("LAUNCHES must be at least 1", file=sys.stderr)
        return 2
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda") if launches > 1 else None
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = (torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if layout == "kn"
         else torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t())
    for _ in range(3):
        matmul(a, b, **knobs)
        torch.matmul(a, b)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for _ in range(launches):
        if flush is not None:
            flush.fill_(1)
        matmul(a, b, **knobs)
        if flush is not None:
            flush.fill_(2)
        torch.matmul(a, b)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
