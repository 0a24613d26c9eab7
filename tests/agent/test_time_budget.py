"""Wall-clock shares of a multi-problem run (argus/agent/time_budget.py), on a fake clock."""
import pytest

from argus.agent.time_budget import (MIN_PLANNER_S, RESERVE_FACTOR, Deadline, planner_seconds,
                                     share_end)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_deadline_counts_down_and_never_goes_negative():
    clock = Clock()
    d = Deadline(60, clock)
    clock.now += 45
    assert d.left() == 15 and d.elapsed() == 45 and not d.expired()
    clock.now += 30
    assert d.left() == 0 and d.expired()
    with pytest.raises(ValueError):
        Deadline(0)


def test_each_problem_gets_an_equal_part_of_what_is_left():
    clock = Clock()
    d = Deadline(300, clock)
    assert share_end(d, 3) == 200.0                      # 100 s of 300 for the first
    clock.now = 150.0                                     # the first used only 50 s
    assert share_end(d, 2) == 150.0 + 250 / 2            # the rest is shared by the others
    with pytest.raises(ValueError):
        share_end(d, 0)


def test_planner_seconds_reserve_the_retiming_and_never_exceed_the_default():
    assert planner_seconds(1000.0, 0.0, [], 4, 600.0) == 600.0            # capped
    seconds = planner_seconds(200.0, 100.0, [1.0, 2.0, 9.0], 4, 600.0)
    assert seconds == pytest.approx(100 - 4 * 2.0 * RESERVE_FACTOR)      # median 2 s
    assert planner_seconds(105.0, 100.0, [2.0], 4, 600.0) is None         # reserve eats it
    assert planner_seconds(100.0 + MIN_PLANNER_S, 100.0, [], 4, 600.0) == MIN_PLANNER_S
