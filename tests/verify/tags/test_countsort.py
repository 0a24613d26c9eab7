"""The counting-sort pack (argus/verify/tags/countsort*.py): the facts of the counts'
definitions hold of real counts, the library's moe_count and moe_place are proved, and
single edits of them are not verified."""

from __future__ import annotations

import itertools

import pytest

from argus.frontend import parse_source
from argus.ops.library import KERNEL_DIR, kernel_ir
from argus.verify.tags import check

SOURCE = (KERNEL_DIR / "moe_route.py").read_text()


def _cnt(keys, x, q):
    return sum(1 for k in keys[:q] if k == x)


def _below(keys, x, q):
    return sum(1 for k in keys[:q] if k < x)


def _lanes(keys, s, x, r, n, end):
    return sum(1 for i in range(n) if i * s + r < min(end, len(keys)) and keys[i * s + r] == x)


@pytest.mark.parametrize("keys", [(0, 1, 0, 0, 2, 1, 0), (1, 1, 1), (2, 0, 2, 0, 2, 0, 2, 0)])
def test_the_definition_facts_hold_of_real_counts(keys):
    """countsort.lemmas and countsort_lanes.lemmas, on every small argument."""
    for x, a in itertools.product(range(3), range(1, len(keys) + 1)):
        assert _cnt(keys, x, 0) == 0
        assert _cnt(keys, x, a) == _cnt(keys, x, a - 1) + (keys[a - 1] == x)
        assert _below(keys, x, 0) == 0
        assert _below(keys, x, a) == _below(keys, x, a - 1) + (keys[a - 1] < x)
    # Below(x, N) + Cnt(x, q) over the entries q with key x: a bijection onto [0, N)
    ranks = sorted(_below(keys, k, len(keys)) + _cnt(keys, k, q) for q, k in enumerate(keys))
    assert ranks == list(range(len(keys)))
    for s in (1, 2, 3):
        for x, n, end in itertools.product(range(3), range(4), range(len(keys) + 1)):
            whole = sum(_lanes(keys, s, x, r, n, end) for r in range(s))
            assert whole == _cnt(keys, x, min(n * s, end))        # every entry in one lane
            for r in range(s):
                if n >= 1:
                    q = (n - 1) * s + r
                    step = int(q < min(end, len(keys)) and keys[q] == x)
                    assert _lanes(keys, s, x, r, n, end) == \
                        _lanes(keys, s, x, r, n - 1, end) + step


@pytest.mark.parametrize("name", ["moe_count", "moe_place"])
@pytest.mark.parametrize("overrides", [{}, {"E": 64, "TOPK": 6}, {"BS": 128}])
def test_the_library_count_and_placement_are_proved(name, overrides):
    assert check(kernel_ir("moe_route", name, **overrides)) == []


def _verdict(kernel, old, new):
    assert old in SOURCE
    k = parse_source(SOURCE.replace(old, new, 1), "moe_route_variant.py")[kernel]
    return {(f.check, f.severity) for f in check(k)}


@pytest.mark.parametrize("kernel, old, new", [
    ("moe_count", "        assign(total, total + select(x == e, select(real, 1.0, 0.0), 0.0))",
     "        pass"),                                                  # nothing counted
    ("moe_count", "n = element(prefix_sum(per), BS - 1) + element(per, BS - 1)",
     "n = element(prefix_sum(per), BS - 1) + element(per, BS - 2)"),   # a lane read twice
    ("moe_place", 'g = load(tile(segment(gates, j * T, T), (BS,), (tt,)), "blocked")',
     'g = load(tile(segment(gates, j * T, T), (BS,), ((tt + 1),)), "blocked")'),
    ("moe_place", "n = element(ahead, BS - 1) + element(hit, BS - 1)",
     "n = element(ahead, BS - 2) + element(hit, BS - 2)"),             # a tile one short
])
def test_a_wrong_count_or_placement_is_not_verified(kernel, old, new):
    found = _verdict(kernel, old, new)
    assert found and any(sev == "error" or check_ == "tag.value-unproved"
                         for check_, sev in found), found


# moe_place counting the entries of smaller experts itself (COUNT_HERE = 1, Below): single
# edits of its count are not verified
HERE = SOURCE.replace("COUNT_HERE = 0 ", "COUNT_HERE = 1 ", 1)
BELOW_LOOP = "        for pt in range((P + BS - 1) // BS):\n            x = cast"


@pytest.mark.parametrize("old, new", [
    ("select(x < e,", "select(x <= e,"),                   # its own entries counted too
    ("select(x < e,", "select(x > e,"),
    (BELOW_LOOP, BELOW_LOOP.replace("(P + BS - 1) // BS", "P // BS")),   # the last tile
    ("first = element(cast(below, int32), 0)", "first = element(cast(below, int32), 0) + 1"),
    ("cast(seen, int32))", "cast(seen + 1.0, int32))"),    # the stored count
    ("n = element(prefix_sum(less), BS - 1) + element(less, BS - 1)",
     "n = element(prefix_sum(less), BS - 1)"),             # a tile's last entry not counted
    ("less = cast(select(x < e, select(real, 1.0, 0.0), 0.0), int32)",
     "less = cast(select(x < e, 1.0, 0.0), int32)"),       # entries past P counted
    ("x = cast(load(tile(experts, (BS,), (pt,)), \"blocked\"), fp32)\n            real",
     "x = cast(load(tile(experts, (BS,), (pt + 1,)), \"blocked\"), fp32)\n            real"),
    ("assign(below, below + n)", "assign(below, below + n + n)"),
])
def test_a_wrong_count_of_smaller_experts_is_not_verified(old, new):
    assert old in HERE
    k = parse_source(HERE.replace(old, new, 1), "moe_route_variant.py")["moe_place"]
    found = {(f.check, f.severity) for f in check(k)}
    assert found and any(sev == "error" or check_ == "tag.value-unproved"
                         for check_, sev in found), found


# found by the router fuzz targets (2026-12-08): each verified before and wrong
def test_offsets_of_counts_this_kernel_writes_are_not_verified():
    """COUNT_HERE == 2 (a mutant): the first slots from the prefix sum of `counts`, which
    the same kernel's blocks store: a race between blocks (the interpreter's blocks in
    index order hid it; in reverse order ids come out wrong)."""
    src = HERE.replace("    if COUNT_HERE == 1:     # the expert's first slot",
                       "    if COUNT_HERE == 2:     # the expert's first slot", 1)
    assert src != HERE
    found = check(parse_source(src, "moe_route_variant.py")["moe_place"])
    assert any(f.check == "tag.placement" and "also writes" in f.message for f in found)


@pytest.mark.parametrize("new", [
    "        assign(total, total + select(x >= e, select(real, 1.0, 0.0) + 0.0 * x, 0.0))",
    "        assign(total, total + select(x == e, 1.0 + 0.0 * x, 0.0))",
])
def test_a_count_whose_choice_is_hidden_behind_a_zero_product_is_not_verified(new):
    old = "        assign(total, total + select(x == e, select(real, 1.0, 0.0), 0.0))"
    found = _verdict("moe_count", old, new)
    assert any(sev == "error" or c == "tag.value-unproved" for c, sev in found), found
