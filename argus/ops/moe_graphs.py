"""A decode MoE call's launches replayed as one CUDA graph (argus.ops.moe.DECODE_GRAPHS).

A decode call (T <= DECODE_T) is a handful of short kernels whose host launches and the
GPU's gaps between them cost as much as the kernels (H100, 2026-12-07: fine-grained T = 1
135 us a call launched one by one, 118 us as one graph replay; docs/perf-log.md). The
launches up to the down GEMM read only the call's inputs (x, the router logits, w13, w2)
and the kept intermediates (moe_calls.Buffers), so with those addresses fixed they are the
same launches every call: captured once, replayed after. The combine, which writes the
call's own fresh output, is launched as before.

`Graphs` decides per kept buffer set (one per plan, stream and thread; the layers of a
model that share a shape share it, each with its own weights, so its own key):
- a call whose inputs' addresses (the key) match a graph kept replays it;
- a key among the last SEEN keys is captured, then replayed; a key seen for the first time
  runs as plain launches (inputs at new addresses every call never pay for a capture);
- at most KEEP graphs a set, the least recently used dropped first;
- once PATIENCE graphs were dropped without a replay, and such wasted captures are more
  than one in REPLAYS_PER_CAPTURE of the replays, the set stops capturing (addresses that
  churn: a capture costs more than a call).

What a graph reads is read at replay: new values at the same addresses are the new call's.
Nothing is captured while the current stream is itself being captured (moe_calls.Plan
then launches into the caller's graph), nor on the interpreter."""

from __future__ import annotations

from typing import Callable

KEEP = 64                     # graphs a set (a model's MoE layers of one shape, say)
SEEN = 256                    # recent keys remembered
PATIENCE = 16
REPLAYS_PER_CAPTURE = 4


class Graphs:
    """The graphs of one kept buffer set. `capture(launch)` records the launches `launch()`
    enqueues and returns a no-argument callable that replays them on the current stream."""

    def __init__(self, capture: Callable):
        self._capture = capture
        self._graphs: dict = {}       # key -> [replay, its replays], least recently used first
        self._seen: dict = {}         # recent keys, oldest first
        self.captures = 0
        self.replays = 0            # replays of a graph kept (not the one after a capture)
        self.wasted = 0             # graphs dropped never replayed
        self.off = False
        self.failure = None         # why a capture failed (then off)

    def run(self, key, launch: Callable) -> None:
        """Enqueue the launches of `launch` for inputs at `key`: a replay, a capture then a
        replay, or the plain launches (see the module's docstring)."""
        entry = self._graphs.pop(key, None)         # [replay, its replays]
        if entry is not None:
            entry[1] += 1
            self.replays += 1
        elif key in self._seen and not self.off:
            entry = self._captured(launch)
        if entry is not None:
            self._graphs[key] = entry               # the most recently used last
        self._seen.pop(key, None)
        self._seen[key] = True
        if len(self._seen) > SEEN:
            self._seen.pop(next(iter(self._seen)))
        if entry is None:
            launch()
        else:
            entry[0]()

    def _captured(self, launch: Callable):
        """A new graph's entry (room made for it), or None when CUDA refused the capture
        (the set then launches plainly from now on)."""
        try:
            replay = self._capture(launch)
        except Exception as exc:         # a launch that cannot be captured
            self.off, self.failure = True, f"{type(exc).__name__}: {exc}"
            return None
        self.captures += 1
        if len(self._graphs) >= KEEP:
            dropped = self._graphs.pop(next(iter(self._graphs)))
            self.wasted += dropped[1] == 0
            self.off = self.wasted >= PATIENCE and \
                self.wasted * REPLAYS_PER_CAPTURE > self.replays
        return [replay, 0]


def cuda_capture(launch: Callable) -> Callable:
    """torch.cuda.CUDAGraph of launch()'s launches, captured on a side stream (capture runs
    nothing; the replay, on the current stream, is ordered after the work before it); its
    replay. capture_begin/capture_end directly: torch.cuda.graph's context would also
    synchronise the device, collect garbage and empty the allocator's cache per capture,
    and the launches allocate nothing."""
    import torch

    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        graph.capture_begin(capture_error_mode="thread_local")
        try:
            launch()
        finally:
            graph.capture_end()
    return graph.replay
