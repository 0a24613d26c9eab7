"""Summary statistics of repeated timings (median and spread, not the mean)."""
from __future__ import annotations

import math


def quantile(samples, q: float) -> float:
    """The q-quantile (0..1) of `samples`, linear between closest ranks."""
    if not samples:
        raise ValueError("no samples to summarise; run at least one timed repetition")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must lie in [0, 1], got {q}")
    xs = sorted(float(x) for x in samples)
    pos = q * (len(xs) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarize(samples_ms) -> dict:
    """median, p10, p90, min, max and count of a list of times in milliseconds."""
    return {"median_ms": quantile(samples_ms, 0.5), "p10_ms": quantile(samples_ms, 0.1),
            "p90_ms": quantile(samples_ms, 0.9), "min_ms": min(samples_ms),
            "max_ms": max(samples_ms), "count": len(samples_ms)}
