"""Shared inputs of the MoE kernel tests: bf16-rounded random data, routings with tails,
empty experts and one expert taking every slot, and the comparison (NaN never passes)."""

from __future__ import annotations

import numpy as np

from argus.interp.machine.dtypes import BF16


def bf16(rng, shape, scale=1.0):
    return BF16.decode(BF16.encode((rng.standard_normal(shape) * scale).astype(np.float32)))


def routing(rng, kind: str, e: int, p: int) -> np.ndarray:
    """Per-expert slot counts adding up to p: "random" (some experts empty, tails),
    "one" (every slot on the last expert), "spread" (every expert, none a tile multiple)."""
    if kind == "one":
        counts = np.zeros(e, np.int64)
        counts[-1] = p
        return counts
    weights = rng.random(e) + 0.05
    if kind == "random":
        weights *= rng.random(e) < 0.7
        if not weights.any():
            weights[0] = 1.0
    return rng.multinomial(p, weights / weights.sum())


def close(out, ref, rel=2 ** -7) -> bool:
    """bf16 output: within rel * (|ref| + max |ref|); NaN or inf never passes."""
    out = np.asarray(out, np.float64)
    if not np.isfinite(out).all():
        return False
    tol = rel * (np.abs(ref) + np.abs(ref).max())
    return bool(np.all(np.abs(out - ref) <= tol))
