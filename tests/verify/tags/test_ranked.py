"""The iterated arg-max (top-k) pack (argus/verify/tags/ranked*.py): the rank order and its
witnesses, the library's moe_topk proved at its specialisations, and single edits of its
selection that are not (errors with a data row, or unproved)."""

from __future__ import annotations

import pytest

from argus.frontend import parse_source
from argus.ops.library import KERNEL_DIR, kernel_ir
from argus.verify.tags import check
from argus.verify.tags import ranked as R
from argus.verify.tags.ranked_store import ranks, witness

SOURCE = (KERNEL_DIR / "moe_route.py").read_text()


def test_the_rank_order_is_largest_first_lowest_column_among_equal():
    assert ranks([1.0, 3.0, 3.0, 0.0], 1, "low") == [1, 2, 0, 3]
    assert ranks([1.0, 3.0, 3.0, 0.0], 1, "high") == [2, 1, 0, 3]
    assert ranks([1.0, 3.0, 3.0, 0.0], -1, "low") == [3, 0, 1, 2]


def test_a_witness_row_separates_a_wrong_order_from_the_reference():
    row = R.Row("L", 8, None)
    smallest = R.Pick(row, -1, 0, "low")
    assert ranks(witness(smallest, 0, 0, None, None), -1, "low")[0] != \
        ranks(witness(smallest, 0, 0, None, None), 1, "low")[0]
    high = R.Pick(row, 1, 0, "high")
    assert witness(high, 0, 0, None, None) == [0.0] * 8          # all equal: ties decide
    assert witness(R.Pick(row, 1, 1, "low"), 1, 1, None, None) is None   # right: none


@pytest.mark.parametrize("overrides", [{}, {"E": 64, "TOPK": 6, "BT": 4},
                                       {"E": 128, "TOPK": 8, "BT": 8}, {"RENORM": 0}])
def test_the_library_topk_is_proved_with_no_finding(overrides):
    assert check(kernel_ir("moe_route", "moe_topk", **overrides)) == []


def _variant(old, new):
    assert old in SOURCE
    return parse_source(SOURCE.replace(old, new, 1), "moe_route_variant.py")["moe_topk"]


def test_one_round_short_stores_weights_over_the_wrong_denominator():
    k = _variant("    for j in range(TOPK):\n        mj = row_max(rest)",
                 "    for j in range(TOPK - 1):\n        mj = row_max(rest)")
    found = [f for f in check(k) if f.severity == "error"]
    assert [f.check for f in found] == ["tag.value"] and "normalised over" in found[0].message
    assert found[0].counterexample.inputs["L"]


def test_a_choice_stored_at_the_next_choice_is_not_verified():
    k = _variant("x_dst = tile(segment(experts, j * T, T), (BT,), (tt,))",
                 "x_dst = tile(segment(experts, ((j + 1) % TOPK) * T, T), (BT,), (tt,))")
    assert any(f.severity == "error" for f in check(k))


def test_an_arg_max_the_pack_does_not_know_stays_unproved():
    k = _variant("ej = -row_max(-select(again == mj, col, 1.0 * E))",
                 "ej = -row_max(-select(again == mj, col, 0.0))")   # fill below the columns
    assert "tag.value-unproved" in {f.check for f in check(k)}


# found by the router fuzz targets' probe (2026-12-08): each verified before, and wrong on
# the interpreter (experts off in 21-38 of 42 entries)
@pytest.mark.parametrize("old, new", [
    ("x = cast(ej, int32)", "x = cast(mj, int32)"),          # the max's value, not its column
    ("x = cast(ej, int32)", "x = cast(row_max(l), int32)"),
    # a data choice whose branch carries data only times a literal zero
    ("x = cast(ej, int32)",
     "x = cast(-row_max(-select(l == row_max(l), col + 0.0 * l, 1.0 * E)), int32)"),
])
def test_a_router_output_holding_no_selection_is_not_verified(old, new):
    found = {(f.check, f.severity) for f in check(_variant(old, new))}
    assert ("tag.value-unproved", "warning") in found or \
        any(sev == "error" for _, sev in found), found


def test_a_column_index_stored_into_the_weights_is_not_verified():
    found = check(_variant("store(g_dst, g)", "store(g_dst, cast(x, fp32))"))
    assert any(f.check == "tag.value-unproved" and "norm" in f.message for f in found) or \
        any(f.severity == "error" for f in found)
