"""The contract of a stored count (a histogram's entry): element i of a count vector holds
Cnt(i, N), the number of entries of the key array X equal to i (countsort.py).

A store of a uniform integer (one value for the block: a count summed over a vector's
lanes, countsort_lanes.py, or carried over tiles, countsort_loops.py) into one element i of
a 1-D tensor is proved when its term equals Cnt(i, N) for the key array it counts, N that
array's length, under the facts of Cnt's definition (countsort.lemmas). Then `counts[e]`
counts the entries equal to e: the consistency the placement (countsort_scatter.py)
assumes of its count vector. Anything else is left to origin.py (a value computed through
comparisons of data and not proved here is unproved)."""

from __future__ import annotations

from argus.ir.nodes import Op
from argus.verify.smt import bv

from . import countsort as C
from . import countsort_lanes, proved
from .values import Fragment, GlobalTile


def store(w, op: Op, base) -> None:
    base(w, op)
    if w.phase != "check":
        return
    dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
    m = C.meaning(src) if isinstance(src, Fragment) else None
    if not (isinstance(dst, GlobalTile) and dst.box == (1,) and isinstance(m, C.Val)) or \
            C.mentions(bv(m.term), w.pos["pr"]):
        return
    tensor = _keys(w, bv(m.term))
    if tensor is None or tensor not in w.tensors:
        return
    want = C.count_fn(w, tensor)(bv(dst.origin[0]), bv(w.tensors[tensor][0]))
    claim = bv(m.term) == want
    if C.proves(w, claim, [*w.path, *countsort_lanes.facts(w, [claim])]):
        proved.mark(w, op)
        # a count vector of the keys, one entry a block (countsort_scatter.finish)
        w.__dict__.setdefault("_countsort_stored", []).append((op, dst.tensor, tensor))


def _keys(w, term):
    """The one key array a count term counts (through Cnt or the lane counts)."""
    names = {C.tensor_of_count(w, a.decl()) for a in C.count_apps(term)}
    names |= {countsort_lanes.kind_of(w, a.decl())[1] for a in countsort_lanes.apps(w, term)}
    names.discard(None)
    return names.pop() if len(names) == 1 else None
