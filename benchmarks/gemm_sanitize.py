"""A short run of the DSL GEMM for compute-sanitizer (memcheck, racecheck, synccheck):
small shapes with tails in M, N and K, both B layouts, every kernel variant the library
ships (plain, TMA-store epilogue whole or in 64-column blocks, 2-block clusters with B
multicast, BM=64 on clusters, split-K); exits 1 on a wrong result.

    compute-sanitizer --tool racecheck python benchmarks/gemm_sanitize.py [VARIANT ...]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

VARIANTS = {
    "plain": {"BN": 256},
    "smem_tma": {"epilogue": "smem_tma", "BN": 256},
    "cluster2": {"cluster_m": 2, "BN": 256},
    "cluster2_smem_tma": {"cluster_m": 2, "epilogue": "smem_tma", "BN": 128},
    "bm64_cluster2": {"BM": 64, "BN": 64, "cluster_m": 2},
    "split_k2": {"split_k": 2, "BN": 128},
    "tma_chunks": {"epilogue": "tma_chunks", "BN": 256},
    "cluster2_tma_chunks": {"cluster_m": 2, "epilogue": "tma_chunks", "BN": 128},
}


def main(argv=None) -> int:
    import torch
    from argus.ops import matmul

    names = (argv if argv is not None else sys.argv[1:]) or list(VARIANTS)
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        print(f"unknown variant(s) {unknown}; one of {', '.join(VARIANTS)}", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    bad = 0
    for name in names:
        knobs = VARIANTS[name]
        # 392 rows: a cluster row whose second block is 8 rows deep; 100 rows: a cluster
        # whose second block has no rows at all
        for m, n, k in [(200, 264, 136), (392, 136, 200), (100, 72, 64)]:
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            for layout in ("kn", "nk"):
                b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if layout == "kn" \
                    else torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
                c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                matmul(a, b, out=c, **knobs)
                ref = a.double() @ b.double()
                err = (c.double() - ref).abs().max().item()
                ok = bool(torch.isfinite(c).all()) and err < 0.05 * ref.abs().max().item()
                bad += not ok
                print(f"{name} {m}x{n}x{k} {layout}: max abs error {err:.4f} "
                      f"{'ok' if ok else 'WRONG'}", flush=True)
    torch.cuda.synchronize()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
