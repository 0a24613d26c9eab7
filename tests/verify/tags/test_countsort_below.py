"""moe_place with COUNT_HERE = 1 (the Below count family of the counting-sort pack): edits
that compute a wrong placement or count, found verified by a review of the first version of
the family (2026-12-08) and now not verified. Each variant is first shown wrong on the
interpreter, then asked of the verifier:

- the first slot counted from another int array than the keys placed (an extra input
  `keys`, or the output `ids`): a first slot now records the key array its Below counts,
  and the scatter contract asks it to be the array it places (countsort_scatter.contract);
- a grid shorter than E with no `counts` store, and `counts[e]` stored before the placement
  loop (the carried count's initial 0): a placement from a Below first slot is proved only
  with a proved store of each block's key count into a vector as long as the grid
  (countsort_scatter.finish: that length, which moe_topk's keys are proved below, is what
  ties every key to a block).
"""

from __future__ import annotations

import numpy as np
import pytest

from argus.frontend import parse_source
from argus.interp.evaluator import interpret
from argus.ops.library import KERNEL_DIR
from argus.verify.tags import check

HERE = (KERNEL_DIR / "moe_route.py").read_text().replace("COUNT_HERE = 0 ", "COUNT_HERE = 1 ", 1)
SIZES = dict(E=8, TOPK=2, BS=128)

XLOAD = 'x = cast(load(tile(experts, (BS,), (pt,)), "blocked"), fp32)\n            real'
SIG = 'wsorted: Tensor["P", fp32]):\n    assume(P % TOPK == 0)'
STORE = "store(tile(counts, (1,), (e,)), cast(seen, int32))"
SEEN = 'seen = fragment(fp32, (1,), "rows(blocked)", init=0.0)     # its entries placed so far\n'

VARIANTS = {
    "first slot from another input": [
        (SIG, SIG.replace('wsorted: Tensor["P", fp32])',
                          'wsorted: Tensor["P", fp32], keys: Tensor["P", int32])')),
        (XLOAD, XLOAD.replace("experts", "keys"))],
    "first slot from ids": [(XLOAD, XLOAD.replace("experts", "ids"))],
    "grid E - 1, counts not stored": [
        ("@kernel(grid=(E,), block=128)\ndef moe_place",
         "@kernel(grid=(E - 1,), block=128)\ndef moe_place"),
        (STORE, "pass")],
    "counts stored before the placement": [
        (STORE, "pass"),
        (SEEN, SEEN + "    if COUNT_HERE == 1:\n        " + STORE + "\n")],
}


def _kernel(name):
    src = HERE
    for old, new in VARIANTS[name]:
        assert old in src, old
        src = src.replace(old, new, 1)
    return parse_source(src, "moe_route_variant.py", SIZES)["moe_place"]


def _run(k, experts):
    p = len(experts)
    inputs = {"experts": np.asarray(experts, np.int32),
              "gates": np.arange(p, dtype=np.float32) / 10,
              "counts": np.full(SIZES["E"], -7, np.int32), "ids": np.full(p, -7, np.int32),
              "slots": np.full(p, -7, np.int32), "wsorted": np.full(p, np.nan, np.float32),
              "keys": np.full(p, SIZES["E"] - 1, np.int32)}
    if all(param.name != "keys" for param in k.params):
        del inputs["keys"]
    return interpret(k, inputs, seed=3).outputs


def _reference(experts):
    order = sorted(range(len(experts)), key=lambda q: (experts[q], q))
    slots = np.empty(len(experts), np.int64)
    slots[order] = np.arange(len(experts))
    return np.bincount(experts, minlength=SIZES["E"]), slots


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_variant_is_wrong_on_the_interpreter(name):
    experts = [7, 4, 1, 0]                       # T = 2, TOPK = 2, j-major
    out = _run(_kernel(name), experts)
    counts, slots = _reference(experts)
    assert not (np.array_equal(out["slots"], slots) and np.array_equal(out["counts"], counts))


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_wrong_variant_is_not_verified(name):
    found = {(f.check, f.severity) for f in check(_kernel(name))}
    assert any(sev == "error" or c in ("tag.value-unproved", "tag.placement")
               for c, sev in found), found


def test_the_library_form_still_verifies():
    from argus.ops.library import kernel_ir
    assert check(kernel_ir("moe_route", "moe_place", COUNT_HERE=1, **SIZES)) == []
