"""Named barriers (bar.sync / bar.arrive id, thread count) and the cluster barrier.

Both are generation counters: arrivals add threads (named) or participants (cluster);
when the expected number is reached the generation advances, waiters are released and
acquire the joined clock of everyone who arrived.
"""

from __future__ import annotations

from argus.limits import NAMED_BARRIERS

from .clocks import VectorClock
from .errors import SchedulerError


class NamedBarrier:
    def __init__(self, barrier_id: int, prefix: str = ""):
        if not 0 <= barrier_id < NAMED_BARRIERS:
            raise SchedulerError(f"named barrier id {barrier_id} out of range; Hopper has ids "
                                 f"0..{NAMED_BARRIERS - 1}")
        self.barrier_id = barrier_id
        self.prefix = prefix      # "cta<rank>." in a cluster: each CTA has its own 16 barriers
        self.expected: int | None = None
        self.arrived = 0
        self.generation = 0
        self._clock = VectorClock()
        self.released_clock = VectorClock()

    @property
    def name(self) -> str:
        return f"{self.prefix}named barrier {self.barrier_id}"

    def arrive(self, threads: int, expected: int, clock: VectorClock) -> int:
        """Add `threads` arrivals; return the generation they belong to."""
        if expected % 32 or expected <= 0:
            raise SchedulerError(
                f"{self.name}: thread count {expected} must be a positive multiple of 32")
        if self.expected is not None and self.expected != expected:
            raise SchedulerError(
                f"{self.name}: arrivals disagree on the thread count ({self.expected} vs "
                f"{expected}); every bar.sync/bar.arrive on one id must use the same count")
        self.expected = expected
        self.arrived += threads
        self._clock.join(clock)
        generation = self.generation
        if self.arrived > expected:
            raise SchedulerError(
                f"{self.name}: {self.arrived} threads arrived but the count is {expected}")
        if self.arrived == expected:
            self.generation += 1
            self.arrived = 0
            self.expected = None
            self.released_clock, self._clock = self._clock, VectorClock()
        return generation


class ClusterBarrier:
    """barrier.cluster.arrive / wait, counting participating agents (one per CTA role)."""

    def __init__(self, participants: int):
        self.participants = participants
        self.arrived = 0
        self.generation = 0
        self._clock = VectorClock()
        self.released_clock = VectorClock()
        self.name = "cluster barrier"

    def arrive(self, clock: VectorClock) -> int:
        generation = self.generation
        self.arrived += 1
        self._clock.join(clock)
        if self.arrived == self.participants:
            self.generation += 1
            self.arrived = 0
            self.released_clock, self._clock = self._clock, VectorClock()
        return generation
