"""Wall-clock budgets of a run over several problems (benchmarks/optimize_gemm.py).

A `Deadline` is the end of the whole run. Each problem gets an equal share of what is left
when it starts (so time one problem did not use goes to the next); inside the share the
planner gets what remains after the hand-picked measurements, less a reserve for the final
re-timing, estimated from the evaluations already measured. The planner is never given more
than its own default budget: a share can only make its budget smaller, and the report says
when it did (stop reason "budget: seconds").
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable

RESERVE_FACTOR = 1.5          # safety on the re-timing reserve (evaluations vary)
MIN_PLANNER_S = 1.0           # below this the planner is not started


class Deadline:
    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic):
        if seconds <= 0:
            raise ValueError("a deadline needs a positive number of seconds")
        self.seconds, self.clock = seconds, clock
        self.start = clock()
        self.end = self.start + seconds

    def left(self) -> float:
        return max(0.0, self.end - self.clock())

    def elapsed(self) -> float:
        return self.clock() - self.start

    def expired(self) -> bool:
        return self.left() <= 0.0


def share_end(deadline: Deadline, problems_left: int) -> float:
    """When the next problem's share ends (a clock reading): an equal part of what is left."""
    if problems_left < 1:
        raise ValueError("problems_left must be >= 1")
    return deadline.clock() + deadline.left() / problems_left


def planner_seconds(share_ends_at: float, now: float, evaluation_seconds: list[float],
                    reserved_evaluations: int, default_seconds: float) -> float | None:
    """Seconds the planner may use: the rest of the share less a reserve of
    `reserved_evaluations` x the median evaluation so far (x RESERVE_FACTOR), capped at the
    planner's default; None when less than MIN_PLANNER_S is left."""
    typical = statistics.median(evaluation_seconds) if evaluation_seconds else 0.0
    reserve = reserved_evaluations * typical * RESERVE_FACTOR
    seconds = min(default_seconds, share_ends_at - now - reserve)
    return seconds if seconds >= MIN_PLANNER_S else None
