"""The weighted combine of routed rows: a fragment accumulated over a loop from 0,
`assign(acc, acc + y * g)`, and what its store must satisfy.

The accumulation gives the fragment a *summed* tag: one `Term` per add, its fields over
the loop counters accumulated since the reset (the top-k loop's j). Fields that are the
same for every counter value (the token a row belongs to, the column) are also the
fragment's own fields, so tag assertions can name them.

At a store of a summed value into a tensor whose elements carry routing fields (a tag
assumption such as `assume(tag(O).token == coord(O)[0])`), for every element the store
writes (`tag.combine`):

- **the right destination**: every summed term's routing field equals the destination's
  (each term is a row of the token the output row belongs to);
- **each routing entry once**: no two terms (or two counter values of one term) sum the
  same routing entry (`entry:<array>`, the slot list coordinate a gathered row was read
  by), for real (not padding) entries;
- **every routing entry**: each entry of that array whose routing fields equal the
  destination's (every top-k choice of the token) is summed by some term at some counter
  value (the loop counters enumerated: a short constant loop).

Those three say that the element is the sum over exactly the token's routing entries;
that each term multiplies the row and the weight of one entry is the join's check
(joins.py, `tag.routing`). Injectivity of the stores themselves (one writer per output
element, or atomics) is writers.py's race check. A summed value stored where no routing
field relates it to the destination is a warning (its rows are not verified).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import z3

from argus.ir.nodes import Op
from argus.verify.finding import Finding
from argus.verify.smt import TIMEOUT_MS, WIDTH, bv, holds, least, value

from . import abstraction, assumptions, report
from .values import FragTag, Fragment

ENTRY = "entry:"


@dataclass(frozen=True)
class Term:
    fields: dict
    accumulated: tuple          # loop counters this term is summed over
    loc: object


def accumulates(w, op: Op, frags) -> bool:
    """`acc + x` with acc a zero-initialised or summed fragment: the result is summed
    (handled, True); anything else is not an accumulation (False)."""
    if op.opcode != "math.add" or len(frags) != 2 or len(op.operands) != 2:
        return False
    acc, x = frags
    if not _sum_like(acc.tag):
        acc, x = x, acc
    if not _sum_like(acc.tag) or x.tag.state != "data" or x.tag.summed:
        return False
    accumulated = tuple(v for v in w.scope_vars() if v not in acc.tag.reset_scope)
    terms = [*acc.tag.summed, Term(dict(x.tag.fields), accumulated, op.loc)]
    tag = FragTag("data", _invariant(w, terms), f"sum of {x.tag.source}",
                  reset_scope=acc.tag.reset_scope, summed=terms)
    t = op.result.type
    w.env[op.result] = Fragment(t.shape, t.layout, tag, op.loc)
    return True


def _sum_like(tag: FragTag) -> bool:
    return (tag.state == "empty" and tag.init == 0) or (tag.state == "data" and bool(tag.summed))


def _invariant(w, terms) -> dict:
    """The fields every term has, with one value whatever its counters are."""
    out = {}
    first = terms[0]
    for name, t in first.fields.items():
        if name.startswith(ENTRY):
            continue
        same = True
        for term in terms:
            if name not in term.fields:
                same = False
                break
            copies = w.ctx.copy_vars(term.accumulated, "'") if term.accumulated else []
            other = z3.substitute(bv(term.fields[name]), *copies) if copies else bv(term.fields[name])
            if not (z3.simplify(bv(t) == other).eq(z3.BoolVal(True))
                    or holds(w.ctx, bv(t) == other, w.path)):
                same = False
                break
        if same:
            out[name] = t
    return out


def check(w, op, dst, src, inst, bounds, inside, scope, wg, base, terms=None) -> bool:
    """The store of a summed value (see the module docstring); False when reported."""
    terms = src.tag.summed if terms is None else terms
    if not terms or not any(n not in ("row", "col") for t in terms for n in t.fields):
        return True          # a sum of plain values: its fields are checked as any value's
    pr, pc = w.pos["pr"], w.pos["pc"]
    coords = (bv(dst.origin[0]) + pr, bv(dst.origin[1]) + pc)
    shared = [n for n in assumptions.fields(w, dst.tensor)
              if all(n in t.fields for t in terms)]
    if not shared:
        w.report(Finding(
            "tag.not-modelled", "warning",
            f"the value stored into {dst.tensor} is a sum of routed rows, but no routing "
            f"field of {dst.tensor} relates its rows to them; its rows are not verified",
            op.loc, "store", f"state what {dst.tensor}'s rows are, e.g. "
            f"assume(tag({dst.tensor}).token == coord({dst.tensor})[0])"))
        return False
    want = {n: assumptions.field(w, dst.tensor, n, coords) for n in shared}
    cex_of = lambda model, elements: report.counterexample(
        w, model, scope, layout=src.layout, warpgroup=wg, thread_base=base, elements=elements)
    # 1. every term belongs to the destination's routing entry
    for term in terms:
        for name in shared:
            claim = z3.Implies(z3.And(inside, _live(term)),
                               inst(bv(term.fields[name])) == inst(want[name]))
            if _proved(w, claim, bounds):
                continue
            model = report.find(w, z3.Not(claim), scope, bounds)
            if model is None:
                continue
            got, exp = value(model, inst(term.fields[name])), value(model, inst(want[name]))
            at = (value(model, inst(coords[0])), value(model, inst(coords[1])))
            w.report(Finding(
                "tag.combine", "error",
                f"{dst.tensor}[{at[0]}, {at[1]}] (of {name} {exp}) sums a row of {name} {got} "
                f"(the add at line {term.loc.line})", op.loc, "store",
                f"store each {name}'s sum at its own row: the tile coordinates of the "
                f"destination must be those of the routing entries summed",
                cex_of(model, (report.element(model, dst.tensor, [inst(c) for c in coords],
                                              {name: inst(term.fields[name])},
                                              {name: inst(want[name])}),))))
            return False
    # 2. and 3. per routing array summed: each entry once, every entry of the destination
    arrays = sorted({n for t in terms for n in t.fields if n.startswith(ENTRY)})
    for key in arrays:
        holders = [t for t in terms if key in t.fields]
        if not _once(w, op, dst, key, holders, inst, bounds, inside, scope, coords, cex_of):
            return False
        if not _every(w, op, dst, key, holders, want, inst, bounds, inside, coords):
            return False
    return True


def _live(term):
    live = term.fields.get("live")
    return bv(live) == 1 if live is not None else z3.BoolVal(True)


def _proved(w, claim, bounds) -> bool:
    if abstraction.install(w.ctx).refutes([*bounds, z3.Not(claim)], abstract=False):
        return True
    return holds(w.ctx, claim, [*w.path, *bounds])


def _once(w, op, dst, key, holders, inst, bounds, inside, scope, coords, cex_of) -> bool:
    for i, a in enumerate(holders):
        for b in holders[i:]:
            copies = w.ctx.copy_vars(b.accumulated, "''") if b.accumulated else []
            other = (lambda x: z3.substitute(x, *copies)) if copies else (lambda x: x)
            differ = (z3.Or(*[x != y for x, y in copies]) if b is a else z3.BoolVal(True))
            if b is a and not copies:
                continue
            twice = z3.And(inside, differ, inst(_live(a)), inst(other(_live(b))),
                           inst(bv(a.fields[key])) == inst(other(bv(b.fields[key]))))
            if abstraction.install(w.ctx).refutes([*bounds, twice], abstract=False):
                continue
            if holds(w.ctx, z3.Not(twice), [*w.path, *bounds]):
                continue
            model = report.find(w, twice, scope, bounds)
            if model is None:
                continue
            entry = value(model, inst(a.fields[key]))
            at = [value(model, inst(c)) for c in coords]
            array = key[len(ENTRY):]
            w.report(Finding(
                "tag.combine", "error",
                f"{dst.tensor}[{at[0]}, {at[1]}] sums {array}[{entry}] twice (the adds at "
                f"lines {a.loc.line} and {b.loc.line})", op.loc, "store",
                f"each routing entry of {array} is summed once: read a different entry at "
                f"every step of the loop",
                cex_of(model, (report.element(model, dst.tensor, [inst(c) for c in coords],
                                              {f"{array} entry": inst(a.fields[key]),
                                               "times summed": 2},
                                              {"times summed": 1}),))))
            return False
    return True


def _every(w, op, dst, key, holders, want, inst, bounds, inside, coords) -> bool:
    array = key[len(ENTRY):]
    q = z3.BitVec(f"{array}_entry", WIDTH)
    shared = [n for n in want if n in assumptions.fields(w, array)]
    if not shared:
        w.report(Finding(
            "tag.not-modelled", "warning",
            f"no routing field of {array} says which of its entries belong to an element of "
            f"{dst.tensor}; that every one is summed is not verified", op.loc, "store",
            f"state it, e.g. assume(tag(segment({array}, j * T, T)).token == "
            f"coord(...)[0] - j * T) in a loop over the choices j"))
        return False
    belongs = z3.And(z3.ULT(q, bv(w.tensors[array][0])),
                     *[assumptions.field(w, array, n, (q,)) == bv(want[n]) for n in shared])
    hits = []
    for term in holders:
        loops = []
        for name in term.accumulated:
            bound = w.ctx.small.get(w.ctx.vars[name].term.sexpr())
            if bound is None:
                w.report(Finding(
                    "tag.not-modelled", "warning",
                    f"the sum over {w.ctx.vars[name].name} (not a short constant loop) is not "
                    f"checked to cover every entry of {array}", op.loc, "store",
                    "sum over range(TOPK) with a constant TOPK"))
                return False
            loops.append((w.ctx.vars[name].term, bound))
        for combo in product(*[range(b) for _, b in loops]):
            pairs = [(t, z3.BitVecVal(c, WIDTH)) for (t, _), c in zip(loops, combo)]
            hit = z3.And(bv(term.fields[key]) == q, _live(term))
            hits.append(z3.substitute(hit, *pairs) if pairs else hit)
    missed = z3.And(inside, belongs, z3.Not(z3.Or(*hits)))
    if abstraction.install(w.ctx).refutes([*bounds, inst(missed)], abstract=False):
        return True
    s = z3.Solver()
    s.set("timeout", TIMEOUT_MS)
    s.add(*w.ctx.facts, *w.path, *bounds, inst(missed))
    verdict = s.check()
    if verdict == z3.unsat:
        return True
    if verdict == z3.unknown:
        raise report.Undecided(f"whether every entry of {array} is summed")
    least(s, [q, *report.order_of(w, w.scope_vars())])
    m = s.model()
    at = [value(m, inst(c)) for c in coords]
    sizes = {n: value(m, t) for n, t in w.sizes.items()}
    from argus.verify.finding import Counterexample, ElementTag
    cex = Counterexample(sizes=sizes, iteration={w.ctx.vars[n].name: value(m, w.ctx.vars[n].term)
                                                 for n in w.scope_vars()},
                         elements=(ElementTag(dst.tensor, tuple(at),
                                              {f"{array}[{value(m, q)}] summed": 0},
                                              {"summed": 1}),))
    w.report(Finding(
        "tag.combine", "error",
        f"{dst.tensor}[{at[0]}, {at[1]}] never sums {array}[{value(m, q)}], one of its routing "
        f"entries ({', '.join(f'{n} {value(m, inst(want[n]))}' for n in shared)})",
        op.loc, "store", f"sum every routing entry of the {shared[0]}: loop over all the "
        f"choices (range(TOPK)) and read the entry of each", cex))
    return False
