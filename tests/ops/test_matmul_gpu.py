"""argus.ops.matmul on an sm_90 GPU (skipped elsewhere): fresh random inputs, the output
poisoned with NaN first, error against an fp64 reference no worse than a few times
cuBLAS's own on the same inputs, for tails, both B layouts, both dtypes and every kernel
variant (default, epilogue through shared memory whole or in 64-column blocks, split-K,
2-block clusters with B multicast, alone and with the shared-memory epilogues, narrow tiles
whose K x N B stage has 64- and 32-byte swizzle rows). The timed sweep is
`argus bench gemm`; this is the quick check a GPU session runs first."""

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("needs an sm_90 GPU", allow_module_level=True)

from argus.ops import matmul  # noqa: E402

SHAPES = [(200, 264, 136), (1, 8, 8), (1000, 1032, 520), (128, 4096, 4096), (392, 136, 200)]
VARIANTS = [{}, {"epilogue": "smem_tma"}, {"split_k": 4, "BN": 128}, {"cluster_m": 2},
            {"cluster_m": 2, "epilogue": "smem_tma", "BN": 128},
            {"BM": 64, "BN": 64, "cluster_m": 2}, {"epilogue": "tma_chunks"},
            {"epilogue": "tma_chunks", "BN": 128, "cluster_m": 2},
            {"BM": 64, "BN": 32}, {"BM": 64, "BN": 16, "split_k": 2},
            {"BN": 192, "epilogue": "smem_tma"}, {"BM": 64, "BN": 96}]


@pytest.mark.parametrize("knobs", VARIANTS, ids=["default", "smem_tma", "split_k4", "cluster2",
                                                 "cluster2_smem_tma_bn128", "bm64_cluster2",
                                                 "tma_chunks", "cluster2_tma_chunks_bn128",
                                                 "bn32_64B_swizzle", "bn16_32B_swizzle_split2",
                                                 "bn192_smem_tma", "bm64_bn96"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("layout", ["kn", "nk"])
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_matmul_matches_fp64(m, n, k, layout, dtype, knobs):
    g = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
    a = torch.randn(m, k, device="cuda", dtype=dtype, generator=g)
    if layout == "kn":
        b = torch.randn(k, n, device="cuda", dtype=dtype, generator=g)
    else:
        b = torch.randn(n, k, device="cuda", dtype=dtype, generator=g).t()
    out = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    matmul(a, b, out=out, **knobs)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    peer = (torch.matmul(a, b).double() - ref).abs().max().item()
    err = (out.double() - ref).abs().max().item()
    assert torch.isfinite(out).all()
    assert err <= 4 * peer + 1e-3, f"max error {err} vs cuBLAS {peer}"


def test_split_k_workspace_stays_zero_and_graph_replays():
    """Split-K through the cached workspace (argus/ops/workspace.py): calls of different
    shapes in a row are each right (the previous call's rounding cleared the buffer), the
    buffer is all zeros after them, and a CUDA graph of a split-K call replays right on
    new inputs."""
    from argus.ops import workspace

    g = torch.Generator(device="cuda").manual_seed(5)
    for m, n, k in [(6, 4096, 1024), (40, 1024, 2048), (6, 4096, 1024), (1, 8, 64)]:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g).t()
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        matmul(a, b, out=out, BM=64, BN=64, split_k=2)
        ref = a.double() @ b.double()
        peer = (torch.matmul(a, b).double() - ref).abs().max().item()
        assert (out.double() - ref).abs().max().item() <= 4 * peer + 1e-3
    torch.cuda.synchronize()
    for buf in workspace._buffers.values():
        assert int(torch.count_nonzero(buf)) == 0
    a = torch.randn(8, 512, device="cuda", dtype=torch.bfloat16, generator=g)
    b = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16, generator=g)
    out = torch.empty(8, 256, device="cuda", dtype=torch.bfloat16)
    matmul(a, b, out=out, BM=64, BN=64, split_k=2)      # built and warm before capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        matmul(a, b, out=out, BM=64, BN=64, split_k=2)
    for _ in range(2):
        a.copy_(torch.randn(8, 512, device="cuda", dtype=torch.bfloat16, generator=g))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        ref = a.double() @ b.double()
        assert (out.double() - ref).abs().max().item() <= 4 * (
            (torch.matmul(a, b).double() - ref).abs().max().item()) + 1e-3


def test_repeated_calls_follow_their_tensors():
    """The launch parameters are kept per (addresses, pitches, devices, shape) of a call
    (matmul_into's keyed launch): calls that change only the tensors, only a row pitch (a
    column slice of a wider tensor), only the B layout, or give `out` or not, each compute
    their own product, checked against fp64 with the output poisoned."""
    g = torch.Generator(device="cuda").manual_seed(11)
    m, n, k = 136, 264, 200
    wide = torch.randn(k, n + 64, device="cuda", dtype=torch.bfloat16, generator=g)
    cases = []
    for _ in range(2):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=g)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16, generator=g)
        bt = torch.randn(n, k, device="cuda", dtype=torch.bfloat16, generator=g).t()
        cases += [(a, b), (a, bt), (a, wide[:, :n]), (a, wide[:, 64:]), (a, b)]
    for i, (a, b) in enumerate(cases * 2):
        ref = a.double() @ b.double()
        if i % 2:
            out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            matmul(a, b, out=out)
        else:
            out = matmul(a, b)
        torch.cuda.synchronize()
        err = (out.double() - ref).abs().max().item()
        assert torch.isfinite(out).all() and err <= 0.25, f"case {i}: max error {err}"
