"""Elementwise math on routed values: which tag the result carries, and routed values of
different entries never meeting.

Values that carry routing fields (assumptions.py: an expert, a token, a choice), padding
flags (`live`) or routing entries (`entry:<array>`, gather.py) are joined field by field:

- a product (mul, div) is one routing entry's: a routing field that two factors both
  carry must be equal for every real element, a gate multiplies the row of its own
  (token, choice), silu(gate) * up holds rows of one expert (`tag.routing`, as at a
  wgmma, meet.py); sums, maxima and selects aggregate over entries (the router adds the
  flags of a token's two choices): a routing field the operands disagree on is dropped;
- a coordinate field (row, col) is kept when the operands agree, dropped when they name
  different elements (a gathered row times its gate: the row of Yd and the entry of the
  gates differ); a field only some operands carry comes from them (a row vector broadcast
  along the columns has no col);
- accumulators joined (silu(gate) * up) must have accumulated the same k steps (the same
  contributions but for the wgmma site), so the k coverage the store checks for the first
  holds for every one; otherwise the result is not modelled.

A sum accumulated in a loop, `assign(acc, acc + x)` with acc starting from 0, becomes a
*summed* tag (combine.py). Values without any routing tag take the ordinary rule
(memory.elementwise)."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.verify.finding import Finding
from argus.verify.smt import bv, holds, value

from . import combine, memory, report
from .values import FragTag, Fragment

COORDINATES = ("row", "col")
MEETS = ("math.mul", "math.div")    # a product is one entry's (a row times its weight);
                                    # sums, maxima, selects aggregate over entries


def routed(w, tag: FragTag) -> bool:
    """Does the tag carry routing data: a field a tag assumption defines (the expert, the
    token), the padding flag, a routing entry, or a sum of such terms?"""
    if tag.state != "data":
        return False
    if tag.summed:
        return True
    names = routing_fields(w)
    if any(n in names or n.startswith("entry:") for n in tag.fields):
        return True
    # a padding flag alone (a segment's rows, e.g. an attention head's queries) is routed
    # data only outside the wgmma atoms' values, whose rules (the softmax) keep it
    return "live" in tag.fields and tag.meaning is None and not tag.contributions


def routing_fields(w) -> set:
    return {name for (_, name) in getattr(w, "tag_assumptions", {})}


def _plain(frag) -> bool:
    """A fragment of a plain layout (blocked, rows(blocked)): the router's register math."""
    from .vectors import plain
    return plain(frag)


def reported(tag: FragTag) -> bool:
    """An unknown tag left by a check that failed (and was reported) upstream."""
    return tag.state == "unknown" and tag.why_unknown.startswith("tag.")


def elementwise(w, op: Op, prev=memory.elementwise) -> None:
    frags = [w.value(o) for o in op.operands if isinstance(w.value(o), Fragment)]
    t = op.result.type
    failed = next((f.tag for f in frags if reported(f.tag)), None)
    if failed is not None:          # an error upstream, reported there: carry it on
        w.env[op.result] = Fragment(t.shape, t.layout, failed.copy(), op.loc)
        return
    if not any(routed(w, f.tag) for f in frags) and not all(_plain(f) for f in frags):
        prev(w, op)           # the Hopper atoms' values (GEMM, attention): their rules
        return
    if combine.accumulates(w, op, frags):
        return
    if any(f.tag.state == "unknown" for f in frags) or any(f.tag.summed for f in frags):
        why = next((f.tag.why_unknown for f in frags if f.tag.state == "unknown"), "") or \
            f"{op.opcode} of a sum that is not accumulated"
        w.not_modelled(op, why)
        w.env[op.result] = Fragment(t.shape, t.layout, FragTag("unknown", why_unknown=why),
                                    op.loc)
        return
    data = [f for f in frags if f.tag.state == "data"]
    if not data:                     # constants and coordinates of nothing stored
        w.env[op.result] = Fragment(t.shape, t.layout, FragTag(
            "empty", reset_scope=w.scope_vars(), init=None, init_loc=op.loc), op.loc)
        return
    fields = {}
    names = list(dict.fromkeys(n for f in data for n in f.tag.fields))
    live = [bv(f.tag.fields["live"]) == 1 for f in data if "live" in f.tag.fields]
    live += _positions(w, t.shape)
    for name in names:
        terms = [f.tag.fields[name] for f in data if name in f.tag.fields]
        if all(_same(w, terms[0], x, name, live) for x in terms[1:]):
            fields[name] = terms[0]
        elif op.opcode in MEETS and name not in COORDINATES \
                and not name.startswith("entry:") and name != "live":
            if _mismatch(w, op, data, name):
                w.env[op.result] = Fragment(t.shape, t.layout, FragTag(
                    "unknown", why_unknown=f"tag.routing failed at line {op.loc.line}"),
                    op.loc)
                return
            fields[name] = terms[0]      # no element differs (the solver proved it so)
    with_k = [f for f in data if f.tag.contributions]
    if any(not _same_steps(w, with_k[0].tag.contributions, f.tag.contributions)
           for f in with_k[1:]):
        why = f"{op.opcode} joins accumulators that accumulated different k steps"
        w.not_modelled(op, why)
        w.env[op.result] = Fragment(t.shape, t.layout, FragTag("unknown", why_unknown=why),
                                    op.loc)
        return
    first = with_k[0] if with_k else data[0]
    tag = first.tag.copy()
    tag.fields = fields
    w.env[op.result] = Fragment(t.shape, t.layout, tag, op.loc)


def _positions(w, shape) -> list:
    """The element positions of a fragment of `shape` (its tile)."""
    shape = tuple(shape) + (1,) * (2 - len(shape))
    return [z3.ULT(w.pos["pr"], shape[0]), z3.ULT(w.pos["pc"], shape[1])]


def _same(w, a, b, name, live=()) -> bool:
    """a == b for every real (not padding) element."""
    a, b = bv(a), bv(b)
    if z3.simplify(a == b).eq(z3.BoolVal(True)):
        return True
    if name in COORDINATES:      # other elements: the field is dropped, nothing to prove
        return False
    return holds(w.ctx, z3.Implies(z3.And(*live), a == b), w.path)


def _same_steps(w, cs, ds) -> bool:
    """Two accumulations summed the same k steps (site by site, all but the location)."""
    if len(cs) != len(ds):
        return False
    for c, d in zip(cs, ds):
        if c.accumulated != d.accumulated or c.kinstr != d.kinstr or len(c.k) != len(d.k):
            return False
        pairs = [*zip(c.k, d.k), (c.axis_extent, d.axis_extent)]
        if not all(z3.simplify(bv(x) == bv(y)).eq(z3.BoolVal(True)) for x, y in pairs):
            return False
        if not all(z3.simplify(x == y).eq(z3.BoolVal(True)) for x, y in zip(c.valid, d.valid)):
            return False
        if [g.get_id() for g in c.guard] != [g.get_id() for g in d.guard]:
            return False
    return True


def _mismatch(w, op, data, name) -> bool:
    """Report the first element where two operands carry different `name`; False when no
    element does (only the fast proof failed)."""
    holders = [f for f in data if name in f.tag.fields]
    live = [bv(f.tag.fields["live"]) == 1 for f in data if "live" in f.tag.fields]
    live += _positions(w, op.result.type.shape)
    a, b = holders[0], next(f for f in holders[1:] if not _same(
        w, holders[0].tag.fields[name], f.tag.fields[name], name, live))
    sub = report.thread_vars(w, a.layout)
    pr, pc = w.pos["pr"], w.pos["pc"]
    if sub is not None:
        pairs, _, _, bounds = sub
        inst = lambda x: z3.substitute(bv(x), *pairs)
    else:
        shape = tuple(a.shape) + (1,) * (2 - len(a.shape))
        bounds = [z3.ULT(pr, shape[0]), z3.ULT(pc, shape[1])]
        inst = bv
    goal = inst(z3.And(*live, bv(a.tag.fields[name]) != bv(b.tag.fields[name])))
    scope = w.scope_vars()
    model = report.find(w, goal, scope, bounds)
    if model is None:
        return False
    va, vb = value(model, inst(a.tag.fields[name])), value(model, inst(b.tag.fields[name]))
    pos = (value(model, inst(pr)), value(model, inst(pc)))
    actual = {f"{name} of {a.tag.source or 'first'}": va,
              f"{name} of {b.tag.source or 'second'}": vb}
    for f, label in ((a, a.tag.source or "first"), (b, b.tag.source or "second")):
        if "row" in f.tag.fields:
            actual[f"row of {label}"] = value(model, inst(f.tag.fields["row"]))
    wg = w.role.warpgroup if w.role else None
    cex = report.counterexample(w, model, scope, layout=a.layout, warpgroup=wg,
                                thread_base=wg * 128 if wg is not None else 0,
                                elements=(report.element(model, "element", pos, actual, {}),))
    w.report(Finding(
        "tag.routing", "error",
        f"{op.opcode.split('.')[-1]} combines values of different {name}s: {va} ("
        f"{a.tag.source or 'first operand'}) and {vb} ({b.tag.source or 'second operand'}) at "
        f"element {pos}", op.loc, op.opcode,
        f"load both operands at the same routing entry (the same {name}): e.g. the gates "
        f"tile at the coordinates of the slots tile it weighs", cex))
    return True
