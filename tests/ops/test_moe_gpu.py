"""argus.ops.moe's per-call host path on an sm_90 GPU (skipped elsewhere): a decode layer's
kept intermediates and keyed launches (argus/ops/moe_calls.py) under calls that change the
inputs, a CUDA graph captured after eager calls (its own memory, the kept set untouched),
and two streams; each output poisoned first and checked against fp64. The timed layer is
`argus bench moe`."""

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("needs an sm_90 GPU", allow_module_level=True)

import importlib  # noqa: E402

from argus.ops import moe  # noqa: E402
from argus.ops.moe import reference  # noqa: E402

BF16 = torch.bfloat16
MOE = importlib.import_module("argus.ops.moe")      # the module (argus.ops.moe is the op)


@pytest.fixture(params=[False, True], ids=["launches", "graphs"])
def graphs(request, monkeypatch):
    """Each test with the decode launches one by one and replayed as CUDA graphs
    (DECODE_GRAPHS, argus/ops/moe_graphs.py: a key seen twice is captured)."""
    monkeypatch.setattr(MOE, "DECODE_GRAPHS", request.param)
    return request.param


def layer(t, e, k, h=256, i=256, seed=0, logits_dtype=torch.float32):
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(t, h, generator=g, device="cuda").to(BF16)
    L = torch.randn(t, e, generator=g, device="cuda").to(logits_dtype)
    w13 = (torch.randn(2, e, i, h, generator=g, device="cuda") * h ** -0.5).to(BF16)
    w2 = (torch.randn(e, h, i, generator=g, device="cuda") * i ** -0.5).to(BF16)
    return x, L, w13, w2


def poison():
    """NaN into the allocator's free memory, so fresh outputs start as NaN."""
    junk = torch.full((1 << 22,), float("nan"), dtype=BF16, device="cuda")
    del junk


def check(out, x, L, w13, w2, k, what):
    torch.cuda.synchronize()
    ref = reference(x, L, w13, w2, k)
    got = out.double()
    assert torch.isfinite(got).all(), f"{what}: non-finite output"
    err = ((got - ref).abs().max() / ref.abs().max()).item()
    assert err <= 2 ** -6, f"{what}: relative error {err}"


@pytest.mark.parametrize("t, e, k", [(1, 64, 6), (16, 8, 2)])
def test_repeated_decode_calls_follow_their_inputs(t, e, k, graphs):
    x, L, w13, w2 = layer(t, e, k, seed=1)
    x2, L2, w13b, w2b = layer(t, e, k, seed=2)
    refilled = x.clone()
    cases = [(x, L, w13, w2), (x2, L2, w13, w2), (x, L, w13b, w2b), (refilled, L, w13, w2),
             (x, L2.to(BF16), w13, w2), (x, L, w13, w2)]
    for i, args in enumerate(cases * 2):
        if args[0] is refilled:
            refilled.copy_(x2 if i % 2 else x)
        poison()
        check(moe(*args, k), *args, k, f"call {i}")


def test_a_graph_captured_after_eager_calls_replays_its_own_layer(graphs):
    t, e, k = 4, 64, 6
    x, L, w13, w2 = layer(t, e, k, seed=3)
    moe(x, L, w13, w2, k)            # the kept set and the keyed launches exist
    gx, gL = x.clone(), L.clone()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        moe(gx, gL, w13, w2, k)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        gout = moe(gx, gL, w13, w2, k)
    x2, L2, _, _ = layer(t, e, k, seed=4)
    gx.copy_(x2)
    gL.copy_(L2)
    eager = moe(x, L, w13, w2, k)    # an eager call between capture and replay
    graph.replay()
    check(gout, x2, L2, w13, w2, k, "graph replay")
    check(eager, x, L, w13, w2, k, "eager beside the graph")


def test_two_streams_each_compute_their_own_layer(graphs):
    t, e, k = 8, 8, 2
    a = layer(t, e, k, seed=5)
    b = layer(t, e, k, seed=6)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    s1.wait_stream(torch.cuda.current_stream())
    s2.wait_stream(torch.cuda.current_stream())
    outs = []
    for _ in range(3):
        with torch.cuda.stream(s1):
            oa = moe(*a, k)
        with torch.cuda.stream(s2):
            ob = moe(*b, k)
        outs.append((oa, ob))
    torch.cuda.synchronize()
    for oa, ob in outs:
        check(oa, *a, k, "stream 1")
        check(ob, *b, k, "stream 2")


def test_decode_graphs_are_captured_once_and_replay_new_values(monkeypatch):
    """With DECODE_GRAPHS: the second call at the same addresses captures, later ones
    replay, each reading the values its inputs hold then (refilled in place)."""
    monkeypatch.setattr(MOE, "DECODE_GRAPHS", True)
    t, e, k = 1, 64, 6
    x, L, w13, w2 = layer(t, e, k, seed=7)
    fills = [layer(t, e, k, seed=s)[:2] for s in (8, 9, 10, 11)]
    for i, (nx, nL) in enumerate(fills):
        x.copy_(nx)
        L.copy_(nL)
        poison()
        check(moe(x, L, w13, w2, k), x, L, w13, w2, k, f"call {i}")
    plan = MOE.layer_plan(x, L, w13, w2, k)
    kept, _ = plan.buffers(x)
    assert kept.graphs is not None and kept.graphs.captures == 1 and kept.graphs.replays == 2
