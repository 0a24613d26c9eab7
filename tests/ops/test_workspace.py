"""The split-K workspace (argus/ops/workspace.py) on the CPU interpreter: split-K calls
through it are right call after call (each call's rounding kernel clears what its GEMM
added), and a call whose launch raises drops the buffer instead of leaving it dirty."""

import pytest

torch = pytest.importorskip("torch")

from argus.ops import matmul, workspace  # noqa: E402


@pytest.fixture(autouse=True)
def interpret(monkeypatch):
    monkeypatch.setenv("ARGUS_INTERPRET", "1")


@pytest.mark.parametrize("layout", ["kn", "nk"])
def test_split_k_calls_in_a_row_are_each_right(layout):
    g = torch.Generator().manual_seed(3)
    for m, n, k in [(6, 96, 256), (3, 64, 192), (6, 96, 256)]:
        a = torch.randn(m, k, dtype=torch.bfloat16, generator=g)
        w = torch.randn(n, k, dtype=torch.bfloat16, generator=g)
        b = w.t() if layout == "nk" else w.t().contiguous()
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16)
        matmul(a, b, out=out, BM=64, BN=32, split_k=2)
        ref = a.double() @ w.double().t()
        assert torch.isfinite(out).all()
        # bf16 rounding of sums of 256 products of unit normals: a few ulps of ~16
        assert (out.double() - ref).abs().max().item() < 0.25


def test_the_round_kernel_clears_the_workspace():
    from argus.ops.library import library_kernel

    rounder = library_kernel("gemm_splitk", "splitk_round", DT="bf16")
    w = torch.randn(10, 264)
    c = torch.full((10, 264), float("nan"), dtype=torch.bfloat16)
    want = w.to(torch.bfloat16)
    rounder(w, c)
    assert torch.equal(c, want)
    assert int(torch.count_nonzero(w)) == 0


def test_a_raising_launch_drops_the_cached_buffer():
    """The exit path of a call whose launch raised (the cache state a GPU call leaves)."""
    import threading

    key = ("dev", 7)
    workspace._buffers[key] = "a buffer in an unknown state"
    lock = threading.Lock()
    ws = workspace.zeroed_workspace(None)
    ws.key, ws.lock = key, lock
    lock.acquire()
    ws.__exit__(RuntimeError, RuntimeError("launch failed"), None)
    assert key not in workspace._buffers
    assert not lock.locked()
