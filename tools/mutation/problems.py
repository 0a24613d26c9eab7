"""Inputs and reference outputs for targets whose kernel file's `reference` is not the
kernel's own signature (argus.cli.run_reference calls it with the kernel's tensors): the
library attention, whose kernels take flattened (rows, HD) views and size arguments SQ, SK
while its reference takes (B, H, S, D) arrays. Named by Target.problem."""

from __future__ import annotations

import numpy as np

from argus.interp.machine.rounding import round_to_bf16

LOG2E = 1.4426950408889634


def attention(target, seed: int, shapes: dict):
    """B, HQ, HK, SQ, SK from `shapes`; HD, CAUSAL and the scale from the target's
    specialisation. Q, K, V random bf16 (rounded), O and L poisoned with NaN; the expected
    O (bf16 compare) and L (fp32 compare, relative to the largest |L|) from the file's
    float64 reference."""
    from argus.kernels.attention import reference
    from tools.mutation.runner import Problem

    ov = target.overrides
    b, hq, hk, sq, sk = (shapes[n] for n in ("B", "HQ", "HK", "SQ", "SK"))
    d, causal = ov["HD"], bool(ov.get("CAUSAL", 0))
    scale = ov["SCALE_LOG2"] / LOG2E
    rng = np.random.default_rng(seed)
    q, k, v = (round_to_bf16(rng.standard_normal((b, h, s, d)).astype(np.float32))
               for h, s in ((hq, sq), (hk, sk), (hk, sk)))
    o, lse = reference(q, k, v, causal, scale)
    bshd = target.kernel.endswith("bshd")

    def flat(x):
        if bshd:
            return np.ascontiguousarray(x.transpose(0, 2, 1, 3).reshape(x.shape[0] * x.shape[2], -1))
        return np.ascontiguousarray(x.reshape(-1, x.shape[-1]))

    Q, K, V, O = (flat(x) for x in (q, k, v, o))
    arrays = {"Q": Q, "K": K, "V": V, "O": np.full(Q.shape, np.nan, np.float32),
              "L": np.full(b * hq * sq, np.nan, np.float32), "SQ": sq, "SK": sk}
    return Problem(arrays, {"O": O, "L": lse.reshape(-1)}, [("O", "bf16"), ("L", "fp32")])


# The library router (argus/kernels/moe_route.py): its `reference(L, topk, renormalize)`
# gives all six arrays of the three chained kernels at once, so each kernel's inputs are
# made here from router logits (experts and gates as moe_topk writes them: each token's
# TOPK distinct experts, j-major, positive weights) and only what the kernel writes is
# compared. Shapes name T and the logits' `kind`.
ROUTE_POISON = -7


def router_logits(rng, t: int, e: int, kind: str) -> np.ndarray:
    """(T, E) fp32 logits. Kinds (joined with "+"): "random"; "empty" (expert 1 never in
    any token's top k); "all" (expert E-1 in every token's top k); "ties" (integer logits:
    many equal ones, lowest index first; every fifth token all equal); "large" (some
    logits -1e30 and a column -1e4: probabilities that underflow to 0)."""
    L = rng.standard_normal((t, e)).astype(np.float32)
    parts = set(kind.split("+"))
    if "ties" in parts:
        L = np.round(L).astype(np.float32)
        L[::5] = 1.0
    if "large" in parts:
        L[:, e // 2] = -1e4
        L[1::3, 2] = -1e30
    if "empty" in parts:
        L[:, 1] = -30.0
    if "all" in parts:
        L[:, e - 1] += 30.0
    return L


def _router(target, seed: int, shapes: dict):
    """(E, TOPK, T), the logits, and the reference's (counts, experts, gates, ids, slots,
    wsorted) in int64 / float64."""
    from argus.kernels.moe_route import E, RENORM, TOPK, reference

    ov = target.overrides
    e, k, renorm = ov.get("E", E), ov.get("TOPK", TOPK), ov.get("RENORM", RENORM)
    t = shapes["T"]
    rng = np.random.default_rng(seed * 1009 + t)
    L = router_logits(rng, t, e, shapes.get("kind", "random"))
    return (e, k, t), L, reference(L, k, bool(renorm))


def moe_topk(target, seed: int, shapes: dict):
    """moe_topk: L in; experts (exact) and gates (fp32 compare with the fp64 softmax) out,
    poisoned."""
    from tools.mutation.runner import Problem

    (e, k, t), L, (_, experts, gates, *_) = _router(target, seed, shapes)
    p = t * k
    arrays = {"L": L, "experts": np.full(p, ROUTE_POISON, np.int32),
              "gates": np.full(p, np.nan, np.float32)}
    return Problem(arrays, {"experts": experts, "gates": gates},
                   [("experts", "int32"), ("gates", "fp32")])


def moe_count(target, seed: int, shapes: dict):
    """moe_count: the router's experts in; counts out, poisoned, compared exactly."""
    from tools.mutation.runner import Problem

    (e, k, t), _, (counts, experts, *_) = _router(target, seed, shapes)
    arrays = {"experts": experts.astype(np.int32),
              "counts": np.full(e, ROUTE_POISON, np.int32)}
    return Problem(arrays, {"counts": counts}, [("counts", "int32")])


def moe_place(target, seed: int, shapes: dict):
    """moe_place: the router's experts and gates (and, unless COUNT_HERE, moe_count's
    counts) in; ids, slots (exact) and wsorted (fp32: the input gates moved, so compared
    with those fp32 values) out, poisoned. With COUNT_HERE = 1 `counts` is an output too:
    poisoned, compared exactly."""
    from tools.mutation.runner import Problem

    (e, k, t), _, (counts, experts, gates, ids, slots, _) = _router(target, seed, shapes)
    experts, gates = experts.astype(np.int32), gates.astype(np.float32)
    p = t * k
    here = bool(target.overrides.get("COUNT_HERE", 0))
    wsorted = np.empty(p, np.float64)
    wsorted[slots] = gates.astype(np.float64)       # slot of entry i gets gates[i]
    arrays = {"experts": experts, "gates": gates,
              "counts": np.full(e, ROUTE_POISON, np.int32) if here else counts.astype(np.int32),
              "ids": np.full(p, ROUTE_POISON, np.int32),
              "slots": np.full(p, ROUTE_POISON, np.int32),
              "wsorted": np.full(p, np.nan, np.float32)}
    expected = {"ids": ids, "slots": slots, "wsorted": wsorted}
    outputs = [("ids", "int32"), ("slots", "int32"), ("wsorted", "fp32")]
    if here:
        expected["counts"] = counts
        outputs.insert(0, ("counts", "int32"))
    return Problem(arrays, expected, outputs)
