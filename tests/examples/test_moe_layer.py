"""A whole MoE layer (top-2 of 8 experts, SiLU-gated expert MLP, weighted combine) as
interpreted DSL kernels: examples/moe_route.py (top-2 routing, counts, slots sorted by
expert), examples/moe_gate_up.py (gathered rows), examples/moe.py (the down projection as a
grouped GEMM) and examples/moe_combine.py. The first test takes the routing from NumPy (so
the expert kernels are checked alone), the last runs all four kernels from the logits.
Outputs start poisoned (NaN, or -1 for int32)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_kernel
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
E, TOPK = 8, 2


def _example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GATE_UP, GROUPED, COMBINE = _example("moe_gate_up"), _example("moe"), _example("moe_combine")
ROUTE = _example("moe_route")


def _kernel(name, kernel):
    return parse_kernel(EXAMPLES / f"{name}.py", kernel)


def _close(out, ref, rel=2 ** -7) -> bool:
    tol = rel * (np.abs(ref) + np.abs(ref).max())
    return bool(np.all(np.abs(out - ref) <= tol))   # NaN never passes


def route(logits):
    """Top-2 routing: (ids, counts, slots, gates) with slots sorted by expert, then token."""
    t = logits.shape[0]
    top = np.argsort(-logits, axis=1, kind="stable")[:, :TOPK]            # (T, TOPK)
    chosen = np.take_along_axis(logits, top, axis=1)
    gates = np.exp(chosen - chosen.max(axis=1, keepdims=True))
    gates /= gates.sum(axis=1, keepdims=True)
    pairs = sorted((top[tok, j], tok, j) for tok in range(t) for j in range(TOPK))
    ids = np.array([tok for _, tok, _ in pairs], np.int32)
    counts = np.bincount(top.reshape(-1), minlength=E).astype(np.int32)
    slots = np.empty((TOPK, t), np.int32)
    for p, (_, tok, j) in enumerate(pairs):
        slots[j, tok] = p
    return ids, counts, slots.reshape(-1), gates.T.reshape(-1).astype(np.float32), top


def _bf16(rng, *shape, scale=1.0):
    return round_to_bf16((rng.standard_normal(shape) * scale).astype(np.float32))


@pytest.mark.parametrize("seed, mode", [(0, "value"), (1, "exact")])
def test_moe_layer_three_kernels_match_numpy(seed, mode):
    t, k, f, n = 64, 64, 128, 128
    rng = np.random.default_rng(seed)
    x = _bf16(rng, t, k)
    w1, w3 = _bf16(rng, E * f, k, scale=0.125), _bf16(rng, E * f, k, scale=0.125)
    w2 = _bf16(rng, E * n, f, scale=0.125)
    logits = rng.standard_normal((t, E))
    logits[:, 5] = -np.inf                                   # expert 5 gets no token
    ids, counts, slots, gates, top = route(logits)
    p = TOPK * t
    assert counts[5] == 0 and counts.sum() == p

    nan = np.float32(np.nan)
    r1 = interpret(_kernel("moe_gate_up", "moe_gate_up"),
                   {"X": x, "W1": w1, "W3": w3, "ids": ids, "counts": counts,
                    "H": np.full((p, f), nan)}, seed=seed, mode=mode)
    assert r1.ok, r1.failures()
    h = r1.outputs["H"]
    assert _close(h, GATE_UP.reference(x, w1, w3, ids, counts))
    r2 = interpret(_kernel("moe", "moe_grouped"),
                   {"X": h, "W": w2, "counts": counts, "Y": np.full((p, n), nan)}, seed=seed,
                   mode=mode)
    assert r2.ok, r2.failures()
    yd = r2.outputs["Y"]
    assert _close(yd, GROUPED.reference(h, w2, counts))
    r3 = interpret(_kernel("moe_combine", "moe_combine"),
                   {"Yd": yd, "slots": slots, "gates": gates, "O": np.full((t, n), nan)},
                   seed=seed, mode=mode)
    assert r3.ok, r3.failures()
    out = r3.outputs["O"]
    assert _close(out, COMBINE.reference(yd, slots, gates))

    # the layer as a formula, with no slots at all: fp32 throughout, so the three bf16
    # roundings (H, Yd, O) are the only difference
    layer = _layer(x, w1, w3, w2, top, gates)
    assert _close(out, layer, rel=2 ** -5)
    assert not _close(out, layer[::-1], rel=2 ** -5)   # the check can fail


def test_gate_up_tail_slots_are_not_stored():
    """The padding rows of each expert's last tile (expert 0: 3 slots, 125 padding rows that
    gather token 0) never reach H: they would overwrite expert 3's rows. The counts add up
    to the slots of H, as the kernel assumes (a launch where they do not is refused)."""
    t, k, f = 40, 64, 128
    rng = np.random.default_rng(3)
    x = _bf16(rng, t, k)
    w1, w3 = _bf16(rng, E * f, k), _bf16(rng, E * f, k)
    counts = np.array([3, 0, 0, 70, 0, 0, 0, 10], np.int32)     # 83 routed slots
    ids = rng.integers(0, t, 83).astype(np.int32)
    kernel = _kernel("moe_gate_up", "moe_gate_up")
    r = interpret(kernel, {"X": x, "W1": w1, "W3": w3, "ids": ids, "counts": counts,
                           "H": np.full((83, f), np.nan, np.float32)}, seed=4)
    assert r.ok, r.failures()
    h = r.outputs["H"]
    assert not np.isnan(h).any()
    assert _close(h, GATE_UP.reference(x, w1, w3, ids, counts))
    with pytest.raises(Exception, match="assumption does not hold"):
        interpret(kernel, {"X": x, "W1": w1, "W3": w3, "ids": np.resize(ids, 90),
                           "counts": counts, "H": np.full((90, f), np.nan, np.float32)},
                  seed=4)


def test_argus_run_route_gate_up_and_combine(capsys):
    from argus.cli.main import main
    assert main(["run", f"{EXAMPLES / 'moe_gate_up.py'}::moe_gate_up", "--interpret",
                 "--seed", "1"]) == 0
    assert main(["run", f"{EXAMPLES / 'moe_combine.py'}::moe_combine", "--interpret"]) == 0
    assert main(["run", f"{EXAMPLES / 'moe_route.py'}::moe_route", "--interpret"]) == 0
    assert capsys.readouterr().out.count("PASS") == 3


def _layer(x, w1, w3, w2, top, gates):
    """The layer as a formula, with no slots at all, in fp32."""
    t = x.shape[0]
    w1e, w3e, w2e = (w.reshape(E, -1, w.shape[1]) for w in (w1, w3, w2))
    g = gates.reshape(TOPK, t).T
    out = np.zeros((t, w2e.shape[1]), np.float32)
    for tok in range(t):
        for j in range(TOPK):
            e = top[tok, j]
            a, b = x[tok] @ w1e[e].T, x[tok] @ w3e[e].T
            out[tok] += g[tok, j] * ((a / (1 + np.exp(-a)) * b) @ w2e[e].T)
    return out


def _route_on_device(logits, mode="value", seed=0):
    t = logits.shape[0]
    p = TOPK * t
    poison = {name: np.full(n, -1, np.int32) for name, n in
              (("counts", E), ("experts", p), ("ids", p), ("slots", p))}
    r = interpret(_kernel("moe_route", "moe_route"),
                  {"L": logits, **poison, "gates": np.full(p, np.nan, np.float32)},
                  seed=seed, mode=mode)
    assert r.ok, r.failures()
    return {name: r.outputs[name] for name in ("counts", "experts", "ids", "slots", "gates")}


@pytest.mark.parametrize("mode", ["value", "exact"])
@pytest.mark.parametrize("t", [64, 192])
def test_router_matches_numpy(t, mode):
    rng = np.random.default_rng(t)
    logits = rng.standard_normal((t, E)).astype(np.float32)
    logits[:, 2] -= 4.0                                    # expert 2 rarely chosen
    logits[:, 6] = -np.inf                                 # expert 6 never
    got = _route_on_device(logits, mode)
    counts, experts, ids, slots, gates = ROUTE.reference(logits)
    assert got["counts"].tolist() == counts.tolist() and counts[6] == 0
    assert got["experts"].tolist() == experts.tolist()
    assert got["ids"].tolist() == ids.tolist()
    assert got["slots"].tolist() == slots.tolist()
    np.testing.assert_allclose(got["gates"], gates, rtol=1e-6, atol=1e-7)
    # the routing the expert kernels need: slots are a permutation, ids their inverse
    assert sorted(got["slots"].tolist()) == list(range(TOPK * t))
    tokens = np.tile(np.arange(t), TOPK)
    assert (got["ids"][got["slots"]] == tokens).all()


def test_router_tie_takes_the_lowest_expert():
    logits = np.zeros((64, E), np.float32)                  # every logit equal
    logits[:32, 7] = 1.0                                    # half the tokens prefer 7
    got = _route_on_device(logits)
    e = got["experts"].reshape(TOPK, 64)
    assert (e[0, :32] == 7).all() and (e[1, :32] == 0).all()
    assert (e[0, 32:] == 0).all() and (e[1, 32:] == 1).all()
    np.testing.assert_allclose(got["gates"].reshape(TOPK, 64)[:, 32:], 0.5)


def test_moe_layer_routed_on_the_device():
    """Logits in, layer output out: four kernels, nothing routed on the host."""
    t, k, f, n = 128, 64, 128, 128
    rng = np.random.default_rng(42)
    x = _bf16(rng, t, k)
    w1, w3 = _bf16(rng, E * f, k, scale=0.125), _bf16(rng, E * f, k, scale=0.125)
    w2 = _bf16(rng, E * n, f, scale=0.125)
    logits = rng.standard_normal((t, E)).astype(np.float32)
    logits[:, 3] = -np.inf                                  # an expert with no token
    route = _route_on_device(logits)
    p = TOPK * t
    nan = np.float32(np.nan)
    r1 = interpret(_kernel("moe_gate_up", "moe_gate_up"),
                   {"X": x, "W1": w1, "W3": w3, "ids": route["ids"],
                    "counts": route["counts"], "H": np.full((p, f), nan)}, seed=1)
    assert r1.ok, r1.failures()
    r2 = interpret(_kernel("moe", "moe_grouped"),
                   {"X": r1.outputs["H"], "W": w2, "counts": route["counts"],
                    "Y": np.full((p, n), nan)}, seed=2)
    assert r2.ok, r2.failures()
    r3 = interpret(_kernel("moe_combine", "moe_combine"),
                   {"Yd": r2.outputs["Y"], "slots": route["slots"], "gates": route["gates"],
                    "O": np.full((t, n), nan)}, seed=3)
    assert r3.ok, r3.failures()
    out = r3.outputs["O"]
    top = route["experts"].reshape(TOPK, t).T
    assert _close(out, _layer(x, w1, w3, w2, top, route["gates"]), rel=2 ** -5)
    # and against a routing computed without the device: the same layer
    _, experts, _, _, gates = ROUTE.reference(logits)
    assert _close(out, _layer(x, w1, w3, w2, experts.reshape(TOPK, t).T, gates), rel=2 ** -5)
