"""The schedule lemma: every tile order is a bijection onto the grid, checked on the very
function the interpreter and the code generator use; a broken order is caught."""

from __future__ import annotations

import pytest

from argus.verify.tags import schedule


@pytest.mark.parametrize("order,group", [("row_major", 1), ("grouped", 8), ("grouped", 3),
                                         ("swizzled", 8), ("swizzled", 5)])
def test_orders_are_bijections(order, group):
    ok, how = schedule.prove_bijection(order, group)
    assert ok, how


def test_a_broken_order_is_caught(monkeypatch):
    real = schedule.tile_coords

    def broken(order, group, extents, t):
        r, c = real(order, group, extents, t)
        return (r, min(c, extents[1] - 2)) if extents[1] > 2 else (r, c)   # folds columns

    monkeypatch.setattr(schedule, "tile_coords", broken)
    schedule.prove_bijection.cache_clear()
    try:
        ok, how = schedule.prove_bijection("row_major", 1)
    finally:
        schedule.prove_bijection.cache_clear()
    assert not ok and "both map to" in how
