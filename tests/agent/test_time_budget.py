"""Wall-clock shares of a multi-problem run (argus/agent/time_budget.py), on a fake clock:
weighted shares, the planner's slice first and never starved, the hand-picked slice
bounded, the re-timing reserved and shortened or refused when time is short."""
import pytest

from argus.agent.time_budget import (AB, ABBA, HAND_MAX_FRACTION, MIN_PLANNER_S, RESERVE_FACTOR,
                                     Deadline, hand_phase_end, plan_shape, retime_limit,
                                     retime_order, shape_share_end, share_end)


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


def test_shares_are_equal_by_count_or_in_proportion_to_the_estimates():
    clock = Clock()
    d = Deadline(300, clock)
    assert share_end(d, 3) == 200.0                      # 100 s of 300 for the first
    clock.now = 150.0                                     # the first used only 50 s
    assert share_end(d, 2) == 150.0 + 250 / 2            # the rest is shared by the others
    assert share_end(d, [160.0, 80.0]) == pytest.approx(150.0 + 250 * 2 / 3)
    for bad in (0, [], [1.0, 0.0]):
        with pytest.raises(ValueError):
            share_end(d, bad)


def test_when_a_part_cannot_hold_a_verdict_the_shapes_are_served_in_order():
    clock = Clock()
    d = Deadline(300, clock)
    # parts of 100 s hold each shape's minimum (40 s x 1.25): proportional shares
    assert shape_share_end(d, [100.0, 100.0, 100.0], minimum_s=40.0) == 200.0
    # they do not (90 s x 1.25 > 100 s): the first gets its whole estimate x the reserve
    assert shape_share_end(d, [160.0, 160.0, 160.0], minimum_s=90.0) == \
        100.0 + 160.0 * RESERVE_FACTOR
    assert shape_share_end(d, [400.0, 100.0], minimum_s=250.0) == 400.0   # what is left


def test_everything_fits_the_planner_takes_the_slack_up_to_its_default():
    plan = plan_shape(1000.0, planner_need_s=50, hand_need_s=10, retime_need_s=24,
                      default_seconds=600)
    assert plan.fits and not plan.note
    assert plan.retime_reserve_s == 24 * RESERVE_FACTOR
    assert plan.hand_s == 10 * RESERVE_FACTOR
    assert plan.planner_s == 600                          # capped at its default


def test_a_short_share_cuts_the_hand_picked_slice_before_the_planner():
    # today's failure: the hand-picked list alone needed the whole share
    plan = plan_shape(135.0, planner_need_s=53, hand_need_s=160, retime_need_s=20,
                      default_seconds=600)
    work = 135.0 - 20 * RESERVE_FACTOR
    assert plan.hand_s == pytest.approx(HAND_MAX_FRACTION * work)     # bounded
    assert plan.planner_s == pytest.approx(work - plan.hand_s)        # the rest, first
    assert plan.planner_s >= 2 * plan.hand_s
    assert not plan.fits and "own call" in plan.note


def test_the_planner_is_never_given_less_than_its_minimum():
    plan = plan_shape(10.0, planner_need_s=50, hand_need_s=10, retime_need_s=100,
                      default_seconds=600)
    assert plan.planner_s == MIN_PLANNER_S and plan.hand_s == 0.0 and not plan.fits


def test_the_hand_phase_ends_at_the_retiming_reserve_or_its_slice():
    plan = plan_shape(100.0, 40, 12, 8, 600)
    assert hand_phase_end(200.0, 150.0, plan, 10.0) == 190.0       # the planner left time
    assert hand_phase_end(200.0, 185.0, plan, 10.0) == 185.0 + plan.hand_s  # it overran


def test_retiming_order_shrinks_then_refuses():
    assert retime_order(0.0, 100.0, 20.0) == ABBA
    assert retime_order(0.0, 50.0, 20.0) == AB
    assert retime_order(0.0, 30.0, 20.0) == ()


def test_retiming_may_overrun_its_share_only_into_time_the_later_shapes_can_spare():
    clock = Clock()
    d = Deadline(300, clock)                              # ends at 400
    assert retime_limit(d, 200.0, later_need_s=100.0) == 300.0    # 100 s spare for later
    assert retime_limit(d, 200.0, later_need_s=250.0) == 200.0    # none: its own share
    assert retime_limit(d, 200.0, later_need_s=0.0) == 400.0      # the last shape
