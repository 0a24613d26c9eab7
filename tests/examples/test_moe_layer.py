"""A whole MoE layer (top-2 of 8 experts, SiLU-gated expert MLP, weighted combine) as three
interpreted DSL kernels: examples/moe_gate_up.py (gathered rows), examples/moe.py (the down
projection as a grouped GEMM) and examples/moe_combine.py. Only the router's decision
(top-k, the slot order by expert) is made here in NumPy, as the inputs; offsets, tiles and
gathers happen in the kernels. Outputs start as NaN."""

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
    w1e, w3e, w2e = (w.reshape(E, -1, w.shape[1]) for w in (w1, w3, w2))
    g = gates.reshape(TOPK, t).T
    layer = np.zeros((t, n), np.float32)
    for tok in range(t):
        for j in range(TOPK):
            e = top[tok, j]
            a, b = x[tok] @ w1e[e].T, x[tok] @ w3e[e].T
            layer[tok] += g[tok, j] * ((a / (1 + np.exp(-a)) * b) @ w2e[e].T)
    assert _close(out, layer, rel=2 ** -5)
    assert not _close(out, layer[::-1], rel=2 ** -5)   # the check can fail


def test_gate_up_tail_slots_are_not_stored():
    """Slots past the last expert's count (the counts add up to fewer slots than H has)
    keep their poison: a tail tile's gathered rows never reach H."""
    t, k, f = 40, 64, 128
    rng = np.random.default_rng(3)
    x = _bf16(rng, t, k)
    w1, w3 = _bf16(rng, E * f, k), _bf16(rng, E * f, k)
    counts = np.array([3, 0, 0, 70, 0, 0, 0, 10], np.int32)     # 83 routed slots of 90
    ids = rng.integers(0, t, 90).astype(np.int32)
    r = interpret(_kernel("moe_gate_up", "moe_gate_up"),
                  {"X": x, "W1": w1, "W3": w3, "ids": ids, "counts": counts,
                   "H": np.full((90, f), np.nan, np.float32)}, seed=4)
    assert r.ok, r.failures()
    h = r.outputs["H"]
    assert np.isnan(h[83:]).all() and not np.isnan(h[:83]).any()
    ref = GATE_UP.reference(x, w1, w3, ids[:83], counts)
    assert _close(h[:83], ref)


def test_argus_run_gate_up_and_combine(capsys):
    from argus.cli.main import main
    assert main(["run", f"{EXAMPLES / 'moe_gate_up.py'}::moe_gate_up", "--interpret",
                 "--seed", "1"]) == 0
    assert main(["run", f"{EXAMPLES / 'moe_combine.py'}::moe_combine", "--interpret"]) == 0
    assert capsys.readouterr().out.count("PASS") == 2
