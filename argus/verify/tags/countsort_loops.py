"""Counts carried through loops (a counting sort's running count of the entries placed):
the body is walked with the carried value an unknown S (a *hole*), and closed at the end.

At the entry of a loop every fragment its body assigns that holds an integer (countsort.py)
becomes the hole S. At the end, its value must be S + D(j) with D free of S and equal, for
every j but the last, to Cnt(x, B(j + 1)) - Cnt(x, B(j)) for one application Cnt(x, B(j))
of D (the count of the entries between two consecutive positions: proved with Cnt's
definition, countsort.lemmas). Then, by induction over j,
S(j) = S0 + Cnt(x, B(j)) - Cnt(x, B(start)) at the top of iteration j, and
S(stop - 1) + D(stop - 1) after the loop (S0 if it runs no iteration).
Because the equality holds for every key array, B(j + 1) is the position where iteration
j's count ends: the counted ranges follow each other with no gap and no overlap.

Claims made in the body about values computed from S (countsort_scatter.py) are deferred
to the loop's end and checked with S replaced by its closed form (or passed to the loop
around while they still name an outer loop's hole). The loop that carries a count from
outside every loop must end with the count of the whole key array, Cnt(x, N) (N its
length): every entry was counted, hence placed. A claim that fails, or a hole that cannot
be closed, withdraws the proofs resting on it (proved.py): those stores are unproved."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import z3

from argus.ir.nodes import Op
from argus.verify.smt import WIDTH, bv

from . import countsort as C
from . import countsort_lanes, countsort_witness, origin, proved
from .ranked_loops import assigned_in
from .values import Fragment


@dataclass
class Carried:
    frag: Fragment
    hole: Any
    before: Any
    outermost: bool
    lanes: Any = None          # a vector's hole: the function of the position (lanes.py)


@dataclass
class Claim:
    op: Op
    formula: Any
    extra: list
    holes: tuple
    scope: tuple = ()
    info: dict = field(default_factory=dict)     # what a counterexample names (witness)

    def substituted(self, pairs) -> "Claim":
        if not pairs:
            return self
        sub = lambda t: z3.substitute(t, *pairs) if z3.is_expr(t) else t
        info = {k: sub(v) if z3.is_expr(v) else v for k, v in self.info.items()}
        return Claim(self.op, sub(self.formula), self.extra, self.holes, self.scope, info)


@dataclass
class Frame:
    name: str
    carried: list
    claims: list = field(default_factory=list)
    tiles: list = field(default_factory=list)      # (hole, count of a tile placed)


def frames(w) -> list:
    return w.__dict__.setdefault("_countsort_loops", [])


def enter(w, op: Op, name: str) -> None:
    stack = frames(w)
    outer = {id(c.frag) for f in stack for c in f.carried}
    carried = []
    for frag in assigned_in(w, op.regions[0]):
        m = C.meaning(frag)
        if isinstance(m, C.Val) and not C.mentions(bv(m.term), w.pos["pr"]) and \
                w.phase == "check":             # (the first walk checks nothing)
            label = f"carried#{len(stack)}#{len(carried)}#{name}"
            lanes = None
            if frag.shape[0] > 1:               # a count per lane (countsort_lanes.py)
                lanes = z3.Function(label, z3.BitVecSort(WIDTH), z3.BitVecSort(WIDTH))
                hole = lanes(w.pos["pr"])
            else:
                hole = z3.BitVec(label, WIDTH)
            frag.counted = C.Val(hole)
            carried.append(Carried(frag, hole, bv(m.term), id(frag) not in outer, lanes))
        else:
            frag.counted = None
    stack.append(Frame(name, carried))


def defer(w, claim: Claim) -> bool:
    """Attach a claim naming holes to the innermost loop; False outside every loop."""
    stack = frames(w)
    if not stack:
        return False
    stack[-1].claims.append(claim)
    return True


def leave(w, op: Op, name: str) -> None:
    stack = frames(w)
    if not stack or stack[-1].name != name:
        return
    frame = stack.pop()
    j = w.ctx.vars[name].term
    start, stop = w.value(op.arg("start")), w.value(op.arg("stop"))
    pairs, failed, reported = [], [], set()
    for c in frame.carried:
        closed = _close(w, c, j, start, stop, frame)
        if closed is None:
            c.frag.counted = None
            failed.append(c.hole)
            continue
        at_j, after = closed
        pairs.append((c.hole, at_j))
        c.frag.counted = C.Val(after)
        if c.outermost and c.lanes is None and not _whole(w, after):
            failed.append(c.hole)
            if w.phase == "check":
                mine = [cl.substituted(pairs) for cl in frame.claims
                        if C.mentions(cl.formula, c.hole)]
                key = next((a.arg(0) for a in C.count_apps(after)), None)
                op_ = countsort_witness.report_uncovered(
                    w, mine, after, mine[0].info.get("tensor"), key, mine[0].extra) \
                    if mine and key is not None else None
                if op_ is not None:
                    reported.add(id(op_))
    if w.phase != "check":
        return
    for claim in frame.claims:
        if any(C.mentions(claim.formula, h) for h in failed):
            _withdraw(w, claim.op, quiet=id(claim.op) in reported)
            continue
        claim = claim.substituted(pairs)
        formula = claim.formula
        still = tuple(h for f in stack for c in f.carried for h in [c.hole]
                      if C.mentions(formula, h))
        if still:
            stack[-1].claims.append(replace(claim, holes=still))
            continue
        if not C.proves(w, formula, [*claim.extra, *countsort_lanes.facts(w, [formula])]):
            quiet = countsort_witness.report_claim(w, claim)
            _withdraw(w, claim.op, quiet=quiet)


def _withdraw(w, op: Op, quiet: bool) -> None:
    """The proof of `op` refuted: unproved, said (unless `quiet`: an error with a
    counterexample was reported there instead)."""
    got = proved.withdraw(w, op)
    if got is not None and not quiet:
        origin.unproved(w, *got)


def _close(w, c: Carried, j, start, stop, frame: Frame):
    """(S at iteration j, S after the loop) for the carried count c, or None."""
    end = C.meaning(c.frag)
    if not isinstance(end, C.Val):
        return None
    d = _less(bv(end.term), c.hole)
    if d is None:
        return None                      # not S + D(j): the count is not carried on
    if c.lanes is not None:
        got = countsort_lanes.close(w, c.lanes, d, w.pos["pr"], j, start, stop, c.before)
        return None if got is None else got[:2]
    runs = z3.ULT(bv(start), bv(stop))
    facts = [z3.ULT(j + 1, bv(stop))]       # a step to a next iteration
    last = bv(stop) - 1
    tiles = [t for h, t in frame.tiles if h.eq(c.hole)]
    for tile in tiles:                      # what was placed was counted
        if not C.proves(w, tile == d, [z3.ULT(j, bv(stop)), *countsort_lanes.facts(
                w, [tile, d])]):
            return None
    for app in _candidates(tiles, d):
        x, b = app.arg(0), app.arg(1)
        nxt = z3.substitute(b, (j, j + 1))
        cnt = app.decl()
        step = cnt(x, nxt) - app
        if not _steps(w, tiles, d, step, nxt, facts):
            continue
        first = cnt(x, z3.substitute(b, (j, bv(start))))
        # after the last iteration: S(stop - 1) + D(stop - 1) (the counter's terms are
        # exact only inside its range: an iteration's product j * T may be spelt as an
        # if-then-else over the loop's values)
        after = c.before + cnt(x, z3.substitute(b, (j, last))) - first + \
            z3.substitute(d, (j, last))
        return (z3.simplify(c.before + app - first),
                z3.simplify(z3.If(runs, after, c.before)))
    if C.proves(w, d == 0, [z3.ULT(j, bv(stop))]):
        return c.before, c.before
    return None


def _tile_ends(tile):
    """(Cnt(x, A), Cnt(x, B)) of a tile's count Cnt(x, A) - Cnt(x, B) (as
    countsort_rules.py builds it), else None."""
    if z3.is_app_of(tile, z3.Z3_OP_BSUB) and tile.num_args() == 2:
        a, b = tile.arg(0), tile.arg(1)
        if all(C.count_apps(t) == [t] for t in (a, b)):
            return a, b
    return None


def _candidates(tiles, d) -> list:
    """The applications Cnt(x, B(j)) whose B may start iteration j: the start of a tile
    placed in it first, then every application in D."""
    starts = [ends[1] for ends in map(_tile_ends, tiles) if ends is not None]
    seen, out = set(), []
    # a count that D subtracts is where the iteration's range starts: tried first (a
    # failed candidate costs a full query)
    apps = C.count_apps(d)
    subtracted = {a.get_id() for a in _subtracted(d)}
    apps = [a for a in apps if a.get_id() in subtracted] + \
        [a for a in apps if a.get_id() not in subtracted]
    for app in [*starts, *apps]:
        if app.get_id() not in seen:
            seen.add(app.get_id())
            out.append(app)
    return out


def _subtracted(term) -> list:
    """The applications a term subtracts: the right operand of a subtraction, or a product
    by -1 (as z3.simplify writes a - b), read through sums."""
    out, todo = [], [term]
    minus_one = (1 << WIDTH) - 1
    while todo:
        t = todo.pop()
        if z3.is_app_of(t, z3.Z3_OP_BADD):
            todo.extend(t.children())
        elif z3.is_app_of(t, z3.Z3_OP_BSUB) and t.num_args() == 2:
            todo.append(t.arg(0))
            out.extend(C.count_apps(t.arg(1)))
        elif z3.is_app_of(t, z3.Z3_OP_BMUL) and any(
                z3.is_bv_value(c) and c.as_long() == minus_one for c in t.children()):
            out.extend(C.count_apps(t))
    return out


def _steps(w, tiles, d, step, nxt, facts) -> bool:
    """D(j) = Cnt(x, B(j + 1)) - Cnt(x, B(j)) for a step to a next iteration. D equals the
    count of a tile placed, Cnt(x, A) - Cnt(x, B) (checked before): then A = B(j + 1)
    suffices (arithmetic, no counts); else it is asked of D with the counts' facts."""
    for ends in map(_tile_ends, tiles):
        if ends is not None and ends[1].eq(step.arg(1)) and \
                C.proves(w, ends[0].arg(1) == nxt, list(facts)):
            return True
    return C.proves(w, d == step, [*facts, *countsort_lanes.facts(w, [d, step])])


def _less(term, hole):
    """D with term = hole + D, read off the term's structure (sums, and if-then-elses
    whose condition does not name the hole), or None."""
    if term.eq(hole):
        return z3.BitVecVal(0, WIDTH)
    if not C.mentions(term, hole):
        return None
    if z3.is_app_of(term, z3.Z3_OP_BADD):
        parts = term.children()
        with_hole = [p for p in parts if C.mentions(p, hole)]
        if len(with_hole) != 1:
            return None
        rest = _less(with_hole[0], hole)
        if rest is None:
            return None
        others = [p for p in parts if p is not with_hole[0] and not p.eq(with_hole[0])]
        return z3.simplify(z3.Sum(rest, *others)) if others else rest
    if z3.is_app_of(term, z3.Z3_OP_ITE) and not C.mentions(term.arg(0), hole):
        a, b = _less(term.arg(1), hole), _less(term.arg(2), hole)
        if a is None or b is None:
            return None
        return z3.If(term.arg(0), a, b)
    return None


def _whole(w, after) -> bool:
    """The count after the outermost loop is Cnt(x, N): every entry of the key array."""
    for app in C.count_apps(after):
        tensor = C.tensor_of_count(w, app.decl())
        if tensor is None or tensor not in w.tensors:
            continue
        want = app.decl()(app.arg(0), bv(w.tensors[tensor][0]))
        if C.proves(w, after == want, countsort_lanes.facts(w, [after, want])):
            return True
    return False
