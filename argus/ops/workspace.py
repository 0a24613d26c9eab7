"""The fp32 workspace that split-K's partial sums meet in (argus/kernels/gemm_splitk.py),
kept all zeros between calls: the GEMM adds into it with red.global.add, and the kernel
that rounds it into the output (splitk_round) writes the zeros back, so a call needs no
zeroing launch of its own (before: a fill kernel and a copy kernel, 4-5.5 us of a 10-60 us
decode GEMM on an H100, docs/perf-log.md).

One buffer per (device, stream): calls on one stream run in order, so one call's rounding
has cleared the buffer before the next call's GEMM adds into it; a lock keeps two host
threads from interleaving their launch pairs on one stream. While a CUDA graph is being
captured the call gets a fresh buffer zeroed inside the graph instead (the cached one's
state is the eager stream's, not the graph's). A launch that raises leaves the buffer in
an unknown state: it is dropped, and the next call starts from a new zeroed one.
"""

from __future__ import annotations

import threading

_buffers: dict[tuple, object] = {}      # (device, stream) -> flat fp32 tensor of zeros
_views: dict[tuple, object] = {}        # (key, rows, cols) -> its M x N view
_locks: dict[tuple, threading.Lock] = {}
_guard = threading.Lock()


class zeroed_workspace:
    """`with zeroed_workspace(out) as w:` an M x N fp32 tensor of zeros on out's device,
    which the body must leave all zeros (splitk_round clears what the GEMM added)."""

    __slots__ = ("out", "key", "lock")

    def __init__(self, out):
        self.out = out
        self.key = None
        self.lock = None

    def __enter__(self):
        import torch

        out = self.out
        rows, cols = out.shape
        if out.device.type != "cuda":
            return torch.zeros((rows, cols), dtype=torch.float32, device=out.device)
        if torch._C._cuda_isCurrentStreamCapturing():
            return torch.zeros((rows, cols), dtype=torch.float32, device=out.device)
        from argus.runtime.launch import current_stream_handle

        key = (out.device.index, current_stream_handle(torch))
        lock = _locks.get(key)
        if lock is None:
            with _guard:
                lock = _locks.setdefault(key, threading.Lock())
        lock.acquire()
        self.key, self.lock = key, lock
        buf = _buffers.get(key)
        if buf is None or buf.numel() < rows * cols:
            buf = _buffers[key] = torch.zeros(rows * cols, dtype=torch.float32,
                                              device=out.device)
            _views.clear()
        view = _views.get((key, rows, cols))
        if view is None:    # one view object per shape: the launchers' prepared parameters
            view = _views[(key, rows, cols)] = buf[:rows * cols].view(rows, cols)
        return view

    def __exit__(self, kind, value, trace):
        if self.lock is not None:
            if kind is not None:         # a launch raised: what the buffer holds is unknown
                _buffers.pop(self.key, None)
                _views.clear()
            self.lock.release()
        return False


def cached_bytes() -> int:
    """Bytes the cached workspaces hold (for tests and the curious)."""
    return sum(buf.numel() * 4 for buf in _buffers.values())
