"""Loops of arrivals and the arrivals each block of a cluster receives.

A *fan-out loop* is a `for` with constant bounds whose body only signals barriers
(`arrive`, with the index arithmetic, `elect_one` and `if`s around it), e.g. the release
of a stage in every block of the cluster that wrote into it:

    for r in range(CM):
        arrive(empty[x], cta=r)

Its iterations are not pipeline steps: the model keeps it out of the step count and the
loop-nest signature (`model.Where.fanout`), and the arrival checks enumerate its counter
(the trip is at most FANOUT_LIMIT, a cluster's size or so).

`arrivals_at(m, e, r)` is what one step of the fill `e`, executed by every block of the
cluster, delivers to the barrier of block r: for every issuing block b (its
`cluster_rank()` replaced by b) and every value of its fan-out counters, the threads that
execute it (`Where.executions`) when its target is r (an `arrive(bar, cta=t)` reaches
block t; a plain arrive its own block) and its branch conditions hold. Enumerated: the
ranks (at most 8, resources.cluster) and the fan-out counters; symbolic: everything else
(the step, sizes, the conditions).
"""

from __future__ import annotations

from itertools import product

import z3

from argus.ir.nodes import Op
from argus.layout import symbolic as sym

from . import smt

FANOUT_LIMIT = 16
SIGNALS = ("mbarrier.arrive", "mbarrier.at", "elect_one", "if")


def trip(op: Op, terms) -> int | None:
    """The trip count of a fan-out loop, or None when `op` is not one."""
    if op.opcode != "for":
        return None
    try:
        start, stop, step = (terms.of(op.arg(n)) for n in ("start", "stop", "step"))
    except Exception:       # an operand the model has not bound: not a constant loop
        return None
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, stop, step)):
        return None
    if step <= 0:
        return None
    n = max(0, -(-(stop - start) // step))
    if not 0 < n <= FANOUT_LIMIT:
        return None
    ops = list(_ops(op.regions[0]))
    if not any(o.opcode == "mbarrier.arrive" for o in ops):
        return None
    if not all(o.opcode.startswith("arith.") or o.opcode in SIGNALS for o in ops):
        return None
    return n


def _ops(block):
    for o in block.ops:
        yield o
        for region in o.regions:
            yield from _ops(region)


def rank_vars(m) -> list:
    """The terms of every cluster_rank() of the kernel."""
    return [m.terms.env[e.op.result] for e in m.opcode("cluster_rank")
            if e.op.result in m.terms.env]


def issued_by(m, b: int, counters=()) -> list:
    """Substitution pairs: cluster_rank() -> b, and fan-out counters -> their values."""
    pairs = [(v, smt.as_term(b)) for v in rank_vars(m)]
    pairs += [(c, smt.as_term(x)) for c, x in counters]
    return pairs


def at(term, pairs):
    """term with the pairs substituted (ints and Python bools pass through)."""
    if not pairs or not z3.is_expr(term):
        return term
    if z3.is_bool(term):
        return z3.substitute(term, *pairs)
    return z3.substitute(smt.as_term(term), *pairs)


def iterations(where):
    """Every assignment of its fan-out counters: tuples of (counter, value)."""
    loops = where.fanout
    for values in product(*(range(loop.trip) for loop in loops)):
        yield tuple((loop.counter, v) for loop, v in zip(loops, values))


def reaches(m, e, r: int, b: int, counters, when=None):
    """z3 Bool (or bool): the fill `e`, issued by block b at these fan-out counters,
    arrives on block r's barrier and its branch conditions hold (`when`, a condition over
    e's variables, replaces them: the caller has placed them at the step it counts)."""
    pairs = issued_by(m, b, counters)
    op = e.op
    if op.opcode == "mbarrier.arrive" and op.arg("cta") is not None:
        target = at(m.terms.of(op.arg("cta")), pairs)
        hit = smt.eq(target, r)
    else:
        hit = b == r
    if when is None:
        conds = [at(smt.bool_of(c), pairs) for c in e.where.conds]
    else:
        conds = [] if when is True else [at(smt.bool_of(when), pairs)]
    if isinstance(hit, bool):
        if not hit:
            return False
        return z3.And(*conds) if conds else True
    return z3.And(hit, *conds)


def arrivals_at(m, e, r: int, when=None):
    """The arrivals on block r's barrier from one step of fill `e` in every block (where
    `when` holds, if given; else where e's branch conditions hold)."""
    n = m.executions(e.where)
    total = 0
    for b in range(m.cluster_size):
        for counters in iterations(e.where):
            hit = reaches(m, e, r, b, counters, when)
            if hit is False:
                continue
            total = _plus(total, n if hit is True else smt.select(hit, n, 0))
    if z3.is_expr(total):
        folded = z3.simplify(total)
        return folded.as_long() if z3.is_bv_value(folded) else folded
    return total


def _plus(a, b):
    if not (sym.is_symbolic(a) or sym.is_symbolic(b)):
        return a + b
    return smt.as_term(a) + smt.as_term(b)
