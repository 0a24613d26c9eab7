"""Vector clocks: the happens-before order that race detection and barriers use.

Every agent and every asynchronous operation is a clock owner with its own component.
A release (arrive, complete_tx, op completion) hands a copy of the clock to a barrier or
group; an acquire (successful wait) joins it in. Event e1 happens before e2 exactly when
e1's own component is covered by e2's clock.
"""

from __future__ import annotations

from dataclasses import dataclass


class VectorClock:
    """A sparse vector clock: owner id -> counter."""

    __slots__ = ("counts",)

    def __init__(self, counts: dict[int, int] | None = None):
        self.counts = dict(counts or {})

    def copy(self) -> "VectorClock":
        return VectorClock(self.counts)

    def tick(self, owner: int) -> None:
        self.counts[owner] = self.counts.get(owner, 0) + 1

    def join(self, other: "VectorClock") -> None:
        for owner, count in other.counts.items():
            if count > self.counts.get(owner, 0):
                self.counts[owner] = count

    def covers(self, owner: int, count: int) -> bool:
        return self.counts.get(owner, 0) >= count


@dataclass(frozen=True)
class Event:
    """One memory access or sync point: who did it and what it had seen."""

    owner: int
    owner_name: str
    count: int
    clock: VectorClock

    def happens_before(self, later: "Event") -> bool:
        return later.clock.covers(self.owner, self.count)


class ClockOwner:
    """Something that performs events in program order: an agent or an async op."""

    def __init__(self, owner_id: int, name: str, start: VectorClock | None = None):
        self.owner_id = owner_id
        self.name = name
        self.clock = start.copy() if start is not None else VectorClock()

    def event(self) -> Event:
        self.clock.tick(self.owner_id)
        return Event(self.owner_id, self.name, self.clock.counts[self.owner_id], self.clock.copy())
