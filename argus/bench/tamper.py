"""Detects a candidate that patched the timers, torch or the harness itself.

A snapshot holds the objects bound to every attribute of the watched modules and classes
(found statically, so descriptors are compared, not fresh bound methods). The worker takes
one before importing the candidate and compares after the import, after the checks and
after timing; any attribute rebound or removed is reported by name.
"""
from __future__ import annotations

import inspect
import sys
import threading
import time

import torch

_WATCHED_MODULE_NAMES = ("torch", "torch.cuda", "torch.cuda.graphs", "torch.cuda.streams",
                         "torch.linalg", "torch.backends.cuda", "time", "gc", "threading")


def _watched() -> list:
    """(label, object) pairs: the modules above, the timing classes, the harness modules
    and every class they define."""
    items = [(n, sys.modules[n]) for n in _WATCHED_MODULE_NAMES if n in sys.modules]
    for cls in (torch.Tensor, torch.cuda.Event, torch.cuda.Stream, torch.cuda.CUDAGraph,
                torch.Generator):
        for base in cls.__mro__:
            if base is not object:
                items.append((f"{base.__module__}.{base.__qualname__}", base))
    for name, mod in sorted(sys.modules.items()):
        if name.startswith("argus.bench") and mod is not None:
            items.append((name, mod))
            for attr in vars(mod).values():
                if inspect.isclass(attr) and attr.__module__ == name:
                    items.append((f"{name}.{attr.__qualname__}", attr))
    return items


def snapshot() -> dict:
    """Map 'owner.attribute' -> the object bound there now."""
    snap = {}
    for label, obj in _watched():
        try:
            # Classes: every name resolved through the MRO, so a patch that shadows an
            # inherited method shows as a replacement. Modules: their own attributes.
            names = dir(obj) if inspect.isclass(obj) else list(vars(obj))
        except TypeError:
            continue
        for name in names:
            try:
                snap[f"{label}.{name}"] = inspect.getattr_static(obj, name)
            except AttributeError:
                continue
    return snap


def changes(before: dict, after: dict) -> list:
    """Attributes rebound or removed between two snapshots (additions are allowed:
    importing a torch submodule legitimately adds attributes to torch)."""
    out = []
    for key, obj in before.items():
        if key not in after:
            out.append(f"{key} was removed")
        elif after[key] is not obj:
            out.append(f"{key} was replaced")
    return out


def numeric_settings() -> dict:
    """Global switches that change the arithmetic of candidate and peer alike (TF32,
    matmul precision, reduced-precision reductions): a candidate must not flip them."""
    cuda_matmul = torch.backends.cuda.matmul
    return {"float32_matmul_precision": torch.get_float32_matmul_precision(),
            "cuda.matmul.allow_tf32": bool(cuda_matmul.allow_tf32),
            "cuda.matmul.allow_fp16_reduced_precision_reduction":
                bool(cuda_matmul.allow_fp16_reduced_precision_reduction),
            "cuda.matmul.allow_bf16_reduced_precision_reduction":
                bool(cuda_matmul.allow_bf16_reduced_precision_reduction),
            "cudnn.allow_tf32": bool(torch.backends.cudnn.allow_tf32),
            "deterministic_algorithms": torch.are_deterministic_algorithms_enabled()}


def setting_changes(before: dict, after: dict) -> list:
    """Numeric settings that differ between two readings."""
    return [f"numeric setting {k} changed from {before[k]!r} to {after.get(k)!r}"
            for k in before if after.get(k) != before[k]]


def python_threads() -> int:
    """Live Python threads: a candidate that starts one may write outputs or launch work
    after the harness has looked."""
    return threading.active_count()


ORIGINAL_PERF_COUNTER = time.perf_counter
