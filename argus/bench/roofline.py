"""Roofline plausibility: a time faster than the hardware allows is a bug or a cheat.

Peaks are datasheet leads (dense tensor-core rates; HBM bandwidth). A result above
`PLAUSIBLE_FRACTION` of the roofline bound, or more than `MAX_PLAUSIBLE_RATIO` x faster than
the peer, is flagged "implausible, re-verify".
"""
from __future__ import annotations

PLAUSIBLE_FRACTION = 0.95
MAX_PLAUSIBLE_RATIO = 2.0

PEAKS = {
    "H200": {"bytes_per_s": 4.8e12,
             "flops": {"bfloat16": 989e12, "float16": 989e12, "float8": 1979e12,
                       "tf32": 494e12, "float32": 67e12, "float64": 67e12}},
    "H100": {"bytes_per_s": 3.35e12,
             "flops": {"bfloat16": 989e12, "float16": 989e12, "float8": 1979e12,
                       "tf32": 494e12, "float32": 67e12, "float64": 67e12}},
}


def peaks_for(device_name: str):
    """The peak table for a device name such as 'NVIDIA H200', or None if unknown."""
    for key, peaks in PEAKS.items():
        if key in (device_name or ""):
            return key, peaks
    return None, None


def bound_seconds(flops: float, nbytes: float, math_dtype: str, peaks: dict) -> dict:
    """The roofline floor: the larger of compute time and memory time."""
    if math_dtype not in peaks["flops"]:
        raise ValueError(f"no peak rate for math dtype {math_dtype!r}; "
                         f"known: {sorted(peaks['flops'])}")
    compute = flops / peaks["flops"][math_dtype]
    memory = nbytes / peaks["bytes_per_s"]
    return {"compute_s": compute, "memory_s": memory, "bound_s": max(compute, memory),
            "bound_by": "compute" if compute >= memory else "memory"}


def plausibility(time_s: float, flops: float, nbytes: float, math_dtype: str,
                 device_name: str, ratio_to_peer: float | None) -> dict:
    """The fraction of the roofline reached, and whether the result needs re-verifying."""
    key, peaks = peaks_for(device_name)
    reasons = []
    record = {"device_peaks": key}
    if peaks is not None:
        bound = bound_seconds(flops, nbytes, math_dtype, peaks)
        fraction = bound["bound_s"] / time_s if time_s > 0 else float("inf")
        record.update(bound, roofline_fraction=fraction)
        if fraction > PLAUSIBLE_FRACTION:
            reasons.append(f"reaches {fraction:.0%} of the roofline bound "
                           f"(> {PLAUSIBLE_FRACTION:.0%})")
    else:
        record["note"] = f"no peak table for device {device_name!r}; roofline not checked"
    if ratio_to_peer is not None and ratio_to_peer > MAX_PLAUSIBLE_RATIO:
        reasons.append(f"{ratio_to_peer:.2f}x faster than the peer (> {MAX_PLAUSIBLE_RATIO:g}x)")
    record["flag"] = "implausible, re-verify" if reasons else None
    record["flag_reasons"] = reasons
    return record
