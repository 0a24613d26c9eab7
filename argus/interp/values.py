"""Runtime values the evaluator passes between ops, beyond ints, buffers and barriers."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .machine import GlobalTensor, round_to_bf16, round_to_e4m3, round_to_fp16

_MACHINE = {"bf16": "bf16", "fp16": "fp16", "fp32": "fp32", "fp8e4m3": "e4m3",
            "int32": "int32"}


def machine_dtype(dtype) -> str:
    name = str(dtype)
    if name not in _MACHINE:
        raise ValueError(f"dtype {name} has no memory representation in the interpreter")
    return _MACHINE[name]


def round_to(values, dtype) -> np.ndarray:
    """Values rounded to `dtype` (kept as fp32 / int32 arrays in registers)."""
    name = str(dtype)
    v = np.asarray(values, dtype=np.float32)
    if name == "bf16":
        return round_to_bf16(v)
    if name == "fp16":
        return round_to_fp16(v)
    if name == "fp8e4m3":
        return round_to_e4m3(v)
    if name == "int32":
        return np.asarray(values).astype(np.int32)
    return v


@dataclass(frozen=True)
class GlobalTile:
    """A box of a global tensor; `origin` is its first element's coordinates."""
    tensor: GlobalTensor
    origin: tuple[int, ...]
    box: tuple[int, ...]
