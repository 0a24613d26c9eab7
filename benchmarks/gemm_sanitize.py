"""A short run of the DSL GEMM for compute-sanitizer (memcheck, racecheck, synccheck):
small shapes with tails in M, N and K, both B layouts; exits 1 on a wrong result.

    compute-sanitizer --tool racecheck python benchmarks/gemm_sanitize.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    import torch
    from argus.ops import matmul

    torch.manual_seed(0)
    bad = 0
    for m, n, k in [(200, 264, 136), (128, 256, 64)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        for layout in ("kn", "nk"):
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if layout == "kn" else \
                torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
            c = matmul(a, b)
            ref = a.double() @ b.double()
            err = (c.double() - ref).abs().max().item()
            ok = bool(torch.isfinite(c).all()) and err < 0.05 * ref.abs().max().item()
            bad += not ok
            print(f"{m}x{n}x{k} {layout}: max abs error {err:.4f} {'ok' if ok else 'WRONG'}")
    torch.cuda.synchronize()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
