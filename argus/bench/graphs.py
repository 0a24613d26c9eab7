"""CUDA graphs over rotated input copies, for calls too short to time one by one.

One graph holds one call per input copy; the copies together exceed twice the L2, so each
call reads cold inputs as it would after a flush, and launch gaps vanish for the
candidate and the peer alike.
"""
from __future__ import annotations

import math

import torch


def rotation_count(bytes_per_set: float, l2_bytes: int, min_calls: int, max_bytes: int) -> int:
    """How many input/output copies exceed 2x L2: always enough for that, and up to
    `min_calls` (so a replay is long enough to time) as far as `max_bytes` allows."""
    if bytes_per_set <= 0:
        raise ValueError("a problem must move a positive number of bytes")
    need = math.ceil(2 * l2_bytes / bytes_per_set) + 1
    cap = max(1, int(max_bytes // bytes_per_set))
    return max(need, min(min_calls, cap))


def capture(fn, sets: list, warmup_stream_calls: int = 3):
    """A torch.cuda.CUDAGraph calling fn(inputs, outputs) once per set, or raises
    RuntimeError saying why capture failed (e.g. the kernel synchronises the host or uses
    a stream the capture does not own)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup_stream_calls):
            for ins, outs in sets:
                fn(ins, outs)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            for ins, outs in sets:
                fn(ins, outs)
    except Exception as exc:
        raise RuntimeError(f"CUDA graph capture failed: {exc}") from exc
    return graph
