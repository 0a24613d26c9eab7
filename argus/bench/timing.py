"""Device timing of a candidate and its peer, in one process, the same way.

Both are timed with device events around each call after a warm-up, L2 flushed before
each timed call by writing a scratch buffer of twice the L2 size (outside the timed
region), median and p10/p90 of many calls, in alternating rounds so clock drift hits both.
When a call is short (fastest eager probe < `graph_below_ms`, 50 us: a 5 us kernel probes
at ~20 us eagerly, the rest being launch gaps), both are captured in CUDA graphs over input
copies rotated beyond twice the L2, and a replay's time is divided by its calls. A second
measurement with a device-wide synchronize and a host clock catches work escaping the
timed stream. The clock is injectable: tests drive the logic with a fake one on the CPU.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import torch

from argus.bench.stats import summarize

DEFAULT_L2_BYTES = 60 * 2 ** 20  # H200


class TimingUnavailable(RuntimeError):
    """Timing was asked for where there is no CUDA device."""


class EventClock:
    """CUDA events on the current stream. The functions are captured when the clock is
    made (before any candidate is imported), so later patches of torch.cuda.Event or
    torch.cuda.synchronize do not reach it."""

    def __init__(self, device="cuda"):
        if not torch.cuda.is_available():
            raise TimingUnavailable(
                "timing needs a CUDA device and torch.cuda.is_available() is False; run on "
                "the GPU machine (correctness checks alone run on the CPU)")
        self.device = torch.device(device)
        self._event = torch.cuda.Event
        self._record = torch.cuda.Event.record
        self._elapsed = torch.cuda.Event.elapsed_time
        self._sync = torch.cuda.synchronize
        self._host = time.perf_counter

    def marker(self):
        ev = self._event(enable_timing=True)
        self._record(ev)
        return ev

    def elapsed_ms(self, start, end) -> float:
        return float(self._elapsed(start, end))

    def synchronize(self) -> None:
        """Device-wide: waits for every stream, not only the current one."""
        self._sync(self.device)

    def host_s(self) -> float:
        return self._host()


class L2Flusher:
    """Evicts the L2 by writing a scratch buffer of `factor` x its size."""

    def __init__(self, device="cuda", l2_bytes: int | None = None, factor: float = 2.0):
        if l2_bytes is None:
            props = torch.cuda.get_device_properties(torch.device(device))
            l2_bytes = int(getattr(props, "L2_cache_size", 0) or DEFAULT_L2_BYTES)
        self.l2_bytes = int(l2_bytes)
        self.nbytes = int(self.l2_bytes * factor)
        self.scratch = torch.empty(self.nbytes // 4, dtype=torch.int32, device=device)
        self.count = 0

    def __call__(self) -> None:
        self.count += 1
        self.scratch.fill_(self.count)


@dataclass
class TimingConfig:
    """How to time. reps: timed calls per kernel, split over `rounds` alternating rounds."""

    warmup: int = 10
    reps: int = 100
    rounds: int = 10
    graphs: str = "auto"  # "auto" (when a call < graph_below_ms), "always", "never"
    graph_below_ms: float = 0.050  # on the eager probe, which includes launch gaps
    graph_min_calls: int = 20
    max_rotation_bytes: int = 4 * 2 ** 30
    escape_reps: int = 20

    def __post_init__(self) -> None:
        if self.graphs not in ("auto", "always", "never"):
            raise ValueError(f"graphs must be 'auto', 'always' or 'never', got {self.graphs!r}")
        if self.reps < self.rounds or self.rounds < 1 or self.warmup < 1:
            raise ValueError("need warmup >= 1, rounds >= 1 and reps >= rounds")


def time_calls(fn, clock, *, reps: int, warmup: int, before_each=None) -> list:
    """Times `reps` calls of `fn` (after `warmup` calls), each between two markers;
    `before_each` (the L2 flush) runs outside the timed region. Returns milliseconds."""
    for _ in range(warmup):
        if before_each:
            before_each()
        fn()
    clock.synchronize()
    pairs = []
    for _ in range(reps):
        if before_each:
            before_each()
        start = clock.marker()
        fn()
        end = clock.marker()
        pairs.append((start, end))
    clock.synchronize()
    return [clock.elapsed_ms(s, e) for s, e in pairs]


def device_sync_ms(fn, clock, reps: int) -> float:
    """Milliseconds per call of `reps` back-to-back calls ended by a device-wide
    synchronize, by the host clock: includes work on every stream."""
    clock.synchronize()
    t0 = clock.host_s()
    for _ in range(reps):
        fn()
    clock.synchronize()
    return (clock.host_s() - t0) * 1e3 / reps


def escaped_stream_work(cand_event_ms, cand_sync_ms, peer_event_ms, peer_sync_ms) -> bool:
    """True when the candidate's device-synchronized time exceeds its event time by far
    more than the peer's does: work outside the timed stream (or lazily deferred)."""
    cand_gap = cand_sync_ms / max(cand_event_ms, 1e-6)
    peer_gap = peer_sync_ms / max(peer_event_ms, 1e-6)
    return cand_gap > 3.0 * max(1.0, peer_gap) and cand_sync_ms - cand_event_ms > 0.02


def alternate_rounds(kernels: dict, clock, config: TimingConfig, before_each=None) -> dict:
    """Time each kernel (name -> zero-argument call) in `config.rounds` alternating rounds;
    returns name -> list of per-call milliseconds."""
    samples = {name: [] for name in kernels}
    per_round = math.ceil(config.reps / config.rounds)
    for _ in range(config.rounds):
        for name, fn in kernels.items():
            samples[name] += time_calls(fn, clock, reps=per_round, warmup=config.warmup,
                                        before_each=before_each)
    return samples


def ratio(peer_ms: float, cand_ms: float) -> float:
    """Speed-up of the candidate over the peer: peer time / candidate time."""
    if cand_ms <= 0:
        raise ValueError(f"candidate time must be positive to form a ratio, got {cand_ms}")
    return peer_ms / cand_ms


def summarize_pair(samples: dict) -> dict:
    cand, peer = summarize(samples["candidate"]), summarize(samples["peer"])
    return {"candidate": cand, "peer": peer,
            "ratio": ratio(peer["median_ms"], cand["median_ms"])}
