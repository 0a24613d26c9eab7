"""Which cuBLAS kernel torch.matmul launches for each of issue 6's shapes (bf16, both B
layouts): its name carries the tile, cluster and split-K choice, which tells what our
GEMM has to match. `python benchmarks/cublas_kernels.py [MxNxK,...]`; prints one line per
case and writes benchmarks/results/cublas-kernels.json. Needs a CUDA GPU.
"""
import json
import os
import sys

SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (4096, 12288, 4096), (4096, 28672, 4096),
          (4096, 4096, 14336), (16384, 8192, 2048), (256, 8192, 8192), (128, 4096, 4096)]


def kernels_of(fn):
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type.name == "CUDA"]


def main() -> int:
    import torch

    shapes = SHAPES
    if len(sys.argv) > 1:
        shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1].split(",")]
    rows = []
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        for layout in ("kn", "nk"):
            b = (torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if layout == "kn"
                 else torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t())
            names = kernels_of(lambda: torch.matmul(a, b))
            rows.append({"m": m, "n": n, "k": k, "b_layout": layout, "kernels": names})
            print(f"{m}x{n}x{k} {layout}: {' | '.join(names)}", flush=True)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "cublas-kernels.json")
    with open(out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                   "cases": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
