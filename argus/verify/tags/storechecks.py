"""The MoE checks of a store (store.py calls `check` once the value's tag is data):
padding rows never stored (padding.py), a summed value lands on the routing entries it
sums (combine.py), and a routed value whose coordinates were dropped by a join (it holds
data of several elements) is stored only where a tag assertion says what it holds."""

from __future__ import annotations

from argus.verify.finding import Finding

from . import combine, padding
from .joins import COORDINATES, routed


def check(w, op, dst, src, inst, bounds, inside, scope, wg, base) -> bool:
    """False when a finding was reported (the store's other checks are skipped)."""
    if not padding.check(w, op, dst, src, inst, bounds, inside, scope, wg, base):
        return False
    if src.tag.summed:
        return combine.check(w, op, dst, src, inst, bounds, inside, scope, wg, base)
    if any(n.startswith(combine.ENTRY) for n in src.tag.fields):
        # one routed row stored where whole sums belong: checked as a sum of one term
        return combine.check(w, op, dst, src, inst, bounds, inside, scope, wg, base,
                             terms=[combine.Term(dict(src.tag.fields), (), op.loc)])
    asserted = id(op.arg("src")) in w.asserted
    # a coordinate the box does not span (one column: a row vector into a 1-D tensor) has
    # one value, whatever the value's tags say
    missing = [f for f, extent in zip(COORDINATES, dst.box)
               if f not in src.tag.fields and extent != 1]
    if routed(w, src.tag) and missing and not asserted:
        w.report(Finding(
            "tag.not-modelled", "warning",
            f"the value stored into {dst.tensor} combines elements of different "
            f"{' and '.join(f + 's' for f in missing)}, so where it belongs is not verified",
            op.loc, "store", "state what the stored value holds with a tag_assert, e.g. "
            "tag_assert(tag(out).token == coord(dst)[0])"))
        return False
    return True
