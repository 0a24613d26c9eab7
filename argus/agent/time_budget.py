"""Wall-clock budgets of a run over several problems (benchmarks/optimize_gemm.py).

A `Deadline` is the end of the whole run. Each problem gets a share of what is left when it
starts, in proportion to its estimated cost (run_estimate.py; equal parts without
estimates), so time one problem did not use goes to the next; when that part would not hold
what a problem needs for a verdict, the problems are served in order instead, each with its
whole estimate, and the last ones are not started (shape_share_end). Inside a share the
phases run in this order, each bounded:

1. the planner, first, so nothing measured before it can eat its time: the share less the
   re-timing's reserve and the hand-picked phase's slice, never more than its own default
   budget, and never less than MIN_PLANNER_S (its start configuration is always evaluated);
2. the hand-picked list, until the re-timing's reserve (the planner's unused time is its);
   its slice at plan time is at most HAND_MAX_FRACTION of what the re-timing leaves;
3. the re-timing (planner, hand, hand, planner with the full harness), reserved at
   RESERVE_FACTOR x its estimate; when less is left it shortens to (planner, hand), and it
   may run past its share only as far as the problems after it can spare.

No phase starts an evaluation that its estimate says would end past the phase's end.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

RESERVE_FACTOR = 1.25         # safety on estimates (full-harness evaluations varied +-10% on the H200)
MIN_PLANNER_S = 1.0           # the planner's smallest seconds budget
HAND_MAX_FRACTION = 1 / 3     # the hand-picked slice's bound, of the share less the re-timing
ABBA = ("planner", "hand", "hand", "planner")
AB = ("planner", "hand")


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


def share_end(deadline: Deadline, weights: Sequence[float] | int) -> float:
    """When the next problem's share ends (a clock reading). `weights`: the estimated costs
    of this problem and every one after it (this one first), or their count for equal
    parts."""
    if isinstance(weights, int):
        if weights < 1:
            raise ValueError("problems_left must be >= 1")
        weights = [1.0] * weights
    if not weights or any(w <= 0 for w in weights):
        raise ValueError("share_end needs positive weights, this problem's first")
    return deadline.clock() + deadline.left() * weights[0] / sum(weights)


def shape_share_end(deadline: Deadline, totals: Sequence[float], minimum_s: float) -> float:
    """When the next problem's share ends: its part of what is left in proportion to the
    estimated `totals` (its own first), as long as that part holds RESERVE_FACTOR x its
    `minimum_s` (what it needs for a verdict); else the run cannot give every problem a
    verdict, so they are served in order: this one gets RESERVE_FACTOR x its whole estimate
    (or what is left), and those after it start only if their minimum is still left."""
    end = share_end(deadline, list(totals))
    if end - deadline.clock() >= minimum_s * RESERVE_FACTOR:
        return end
    return deadline.clock() + min(deadline.left(), totals[0] * RESERVE_FACTOR)


@dataclass(frozen=True)
class ShapePlan:
    share_s: float
    planner_s: float            # the planner's seconds budget
    hand_s: float               # the hand-picked phase's slice at plan time
    retime_reserve_s: float
    fits: bool                  # the share holds RESERVE_FACTOR x the whole estimate
    note: str = ""

    def to_json(self) -> dict:
        return {k: (round(v, 1) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def plan_shape(share_s: float, planner_need_s: float, hand_need_s: float, retime_need_s: float,
               default_seconds: float) -> ShapePlan:
    """Split a share (the needs are estimates of each phase's whole work, run_estimate.py)."""
    reserve = retime_need_s * RESERVE_FACTOR
    work = share_s - reserve
    hand = max(0.0, min(hand_need_s * RESERVE_FACTOR, HAND_MAX_FRACTION * work))
    planner = min(default_seconds, max(work - hand, MIN_PLANNER_S))
    total = (planner_need_s + hand_need_s + retime_need_s) * RESERVE_FACTOR
    fits = share_s >= total
    note = "" if fits else (
        f"the share ({share_s:.0f} s) is below {RESERVE_FACTOR:g} x the estimate "
        f"({total:.0f} s): the planner gets {planner:.0f} s of the {planner_need_s:.0f} s its "
        f"default budget would take; run this shape in its own call")
    return ShapePlan(share_s, planner, hand, reserve, fits, note)


def hand_phase_end(share_ends_at: float, now: float, plan: ShapePlan,
                   retime_reserve_s: float) -> float:
    """When the hand-picked phase must stop starting evaluations: the share less the
    re-timing's (re-estimated) reserve, and never before its planned slice from now."""
    return max(share_ends_at - retime_reserve_s, now + plan.hand_s)


def retime_limit(deadline: Deadline, share_ends_at: float, later_need_s: float) -> float:
    """How late the re-timing may end: its share's end, or later where the problems after it
    (their estimated minimum, `later_need_s`) leave room before the deadline."""
    return min(deadline.end, max(share_ends_at, deadline.end - later_need_s))


def retime_order(now: float, limit: float, full_s: float) -> tuple[str, ...]:
    """ABBA when four full-harness evaluations (each ~full_s) end by `limit`, else AB when two
    do, else () (no re-timing: the shape has no verdict)."""
    for order in (ABBA, AB):
        if now + len(order) * full_s <= limit:
            return order
    return ()
