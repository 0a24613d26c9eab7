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


_SCALE = []


def load_scale() -> float:
    """How much slower this box checks now than idle: CPU seconds of verifying
    examples/moe.py::moe_grouped now over its 1.2 s on the idle 2-core machine
    (docs/design/verifier-moe.md), at least 1. The 2 s budget of `argus check` per kernel
    is scaled by it, so a busy shared box does not fail the test while a kernel that is
    slow to check still does."""
    if not _SCALE:
        import time
        from pathlib import Path

        from argus.frontend import parse_file
        from argus.verify import verify

        ir = parse_file(Path(__file__).resolve().parents[2] / "examples" / "moe.py")["moe_grouped"]
        verify(ir)                        # one-time imports and z3 start-up
        start = time.process_time()
        verify(ir)
        _SCALE.append(max(1.0, (time.process_time() - start) / 1.2))
    return _SCALE[0]
