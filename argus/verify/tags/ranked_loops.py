"""Rounds of a selection in a loop: `for j in range(K): ... assign(rest, select(col ==
Pick(j), -inf, rest))` carries Keys(j) by induction.

At the loop's entry every fragment the body assigns that holds Keys(k0) (a start of 0, a
step of 1) is given the hypothesis Keys(k0 + j), j the loop counter; the body is walked
with it; at the end of the body the fragment must hold Keys(k0 + j + 1), of the same data
row, sign and tie order. Then (induction over j from k0) it holds Keys(k0 + stop) after
the loop. Otherwise the hypothesis fails: the fragment has no meaning after the loop and
the stores proved inside the body under the hypothesis are withdrawn (proved.py). Any
other fragment the body assigns loses its meaning at the entry (nothing is carried)."""

from __future__ import annotations

from dataclasses import dataclass

import z3

from argus.ir.nodes import Op, walk
from argus.verify.smt import bv

from . import origin, proved
from . import ranked as R
from .values import Fragment


@dataclass
class Carried:
    frag: Fragment
    before: R.Keys
    after: R.Keys = None


def assigned_in(w, body) -> list[Fragment]:
    """The fragments defined outside `body` that it assigns (frag.assign), once each."""
    out, seen = [], set()
    inside = {r for op in walk(body) for r in op.results}
    for op in walk(body):
        if op.opcode != "frag.assign" or op.arg("dst") in inside:
            continue
        frag = w.value(op.arg("dst"))
        if isinstance(frag, Fragment) and id(frag) not in seen:
            seen.add(id(frag))
            out.append(frag)
    return out


def enter(w, op: Op, name: str) -> None:
    start, step = w.value(op.arg("start")), w.value(op.arg("step"))
    j = w.ctx.vars[name].term
    frames = w.__dict__.setdefault("_ranked_loops", [])
    carried = []
    for frag in assigned_in(w, op.regions[0]):
        m = R.meaning(frag)
        if isinstance(m, R.Keys) and start == 0 and step == 1:
            hyp = R.Keys(m.row, m.sign, j, R.Tie()) if R.same(m.k, 0) else \
                R.Keys(m.row, m.sign, _add(m.k, j), m.tie)
            frag.ranked = hyp
            carried.append(Carried(frag, m, hyp))
        else:
            frag.ranked = None
    frames.append((name, carried))
    proved.open_loop(w)


def _add(k, j):
    """k + j as a term (k an int or a term, j a loop counter)."""
    return z3.simplify(bv(j) + k) if isinstance(k, int) else z3.simplify(bv(k) + bv(j))


def leave(w, op: Op, name: str) -> None:
    frames = w.__dict__.get("_ranked_loops", [])
    if not frames or frames[-1][0] != name:
        proved.close_loop(w, True)
        return
    _, carried = frames.pop()
    stop = w.value(op.arg("stop"))
    held = True
    for c in carried:
        end = R.meaning(c.frag)
        hyp = c.after
        ok = (isinstance(end, R.Keys) and end.row is hyp.row and end.sign == hyp.sign
              and end.tie is hyp.tie and R.same(end.k, R.plus(hyp.k, 1)) and stop is not None)
        held = held and ok
        c.frag.ranked = R.Keys(hyp.row, hyp.sign, stop if R.same(c.before.k, 0) else
                               _add(c.before.k, stop), hyp.tie) if ok else None
    for op_, opaque in proved.close_loop(w, held):
        origin.unproved(w, op_, opaque)
