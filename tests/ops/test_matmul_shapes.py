"""argus.ops.matmul on every shape torch.matmul takes, on the interpreter (ARGUS_INTERPRET=1):
K and N that are not multiples of 8 (padded), batched and broadcast operands, row-strided
views read in place; each result against an fp64 product, outputs poisoned first (NaN
fails); shapes it cannot take are refused with a message."""


import pytest

torch = pytest.importorskip("torch")

import argus.ops as ops  # noqa: E402
from argus.runtime.launch_errors import LaunchError  # noqa: E402

BF = torch.bfloat16


@pytest.fixture(autouse=True)
def _interpret(monkeypatch):
    monkeypatch.setenv("ARGUS_INTERPRET", "1")


def _check(got, a, b):
    want = torch.matmul(a.double(), b.double())
    assert got.shape == want.shape
    assert bool(torch.isfinite(got).all())
    err = (got.double() - want).abs().max().item()
    assert err <= 1e-2 * max(1.0, want.abs().max().item()), err


def _poisoned(shape):
    return torch.full(shape, float("nan"), dtype=BF)


@pytest.mark.parametrize("m,n,k", [(37, 45, 19), (20, 64, 30), (33, 13, 64), (1, 7, 3)])
@pytest.mark.parametrize("layout", ["kn", "nk"])
def test_unaligned_k_and_n(m, n, k, layout):
    g = torch.Generator().manual_seed(m * n + k)
    a = torch.randn(m, k, generator=g).to(BF)
    b = torch.randn(k, n, generator=g).to(BF) if layout == "kn" else \
        torch.randn(n, k, generator=g).to(BF).t()
    out = _poisoned((m, n))
    ops.matmul(a, b, out=out)
    _check(out, a, b)
    _check(ops.matmul(a, b), a, b)


def test_batched_with_one_weight_is_one_gemm():
    g = torch.Generator().manual_seed(1)
    a = torch.randn(2, 3, 40, 16, generator=g).to(BF)
    b = torch.randn(16, 24, generator=g).to(BF)
    out = _poisoned((2, 3, 40, 24))
    ops.matmul(a, b, out=out)
    _check(out, a, b)


@pytest.mark.parametrize("ashape,bshape", [((3, 40, 16), (3, 16, 24)),
                                           ((2, 1, 20, 16), (3, 16, 24)),
                                           ((20, 16), (2, 16, 24)),
                                           ((2, 20, 12), (2, 12, 10))])
def test_batched_and_broadcast(ashape, bshape):
    g = torch.Generator().manual_seed(len(ashape) * 7 + bshape[-1])
    a = torch.randn(ashape, generator=g).to(BF)
    b = torch.randn(bshape, generator=g).to(BF)
    _check(ops.matmul(a, b), a, b)


def test_row_strided_views_are_read_in_place():
    g = torch.Generator().manual_seed(3)
    wide = torch.randn(48, 64, generator=g).to(BF)
    a = wide[:40, :32]                      # rows 64 elements apart
    b = torch.randn(96, 64, generator=g).to(BF)[:32, :24]
    assert not a.is_contiguous() and not b.is_contiguous()
    _check(ops.matmul(a, b), a, b)
    w = torch.randn(24, 64, generator=g).to(BF)[:, :32]    # N x K slice, used as W.t()
    _check(ops.matmul(a, w.t()), a, w.t())


@pytest.mark.parametrize("a,b,message", [
    (torch.zeros(8, dtype=BF), torch.zeros(8, 8, dtype=BF), "unsqueeze"),
    (torch.zeros(2, 8, 8, dtype=BF), torch.zeros(3, 8, 8, dtype=BF), "do not broadcast"),
    (torch.zeros(2, 8, 8, dtype=BF), torch.zeros(2, 9, 8, dtype=BF), "do not chain"),
    (torch.zeros(20, 24, dtype=BF)[:, ::2], torch.zeros(12, 8, dtype=BF), "contiguous rows"),
    (torch.zeros(0, 8, dtype=BF), torch.zeros(8, 8, dtype=BF), "empty product"),
])
def test_shapes_it_cannot_take_are_refused(a, b, message):
    with pytest.raises(LaunchError, match=message):
        ops.matmul(a, b)


def test_fake_tensors_of_unaligned_shapes():
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        a = torch.empty(37, 19, dtype=BF)
        b = torch.empty(19, 45, dtype=BF)
        assert torch.ops.argus.matmul(a, b, False).shape == (37, 45)


