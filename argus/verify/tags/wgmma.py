"""wgmma: the GEMM invariants at every instruction, and the accumulator's new tag.

For the instruction of every k-step j and every accumulator element (m, n) (through the
accumulator's TV layout, so a violation names a thread and a register), for all kk:
  A.k == B.k                                         (the k slices meet)
  A.row == D.row, B.row == D.col                     (the same rows and columns keep
                                                     meeting the same accumulator element,
                                                     at every step since the last reset)
where D.row/D.col is the accumulator's tag, or A's/B's at j = kk = 0 on the first
accumulation. Every instruction adds a contribution (A.k over the loop counters since the
reset and kk) that the store checks covers [0, K) exactly once."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.verify.finding import ElementTag, Finding
from argus.verify.smt import bv, holds, value

from . import meet, operands, report
from .values import Contribution, FragTag, Fragment, SmemView


CHECKS = ("tag.wgmma-k", "tag.wgmma-row", "tag.wgmma-col")     # the claims of each instruction


def mma(w, op: Op) -> None:
    if w.phase != "check":
        return
    acc, a, b = (w.value(op.arg(n)) for n in ("acc", "a", "b"))
    if not isinstance(acc, Fragment):
        return
    if a is None or b is None:           # an operand view already reported as wrong
        acc.tag = FragTag("unknown", why_unknown=f"an operand of the wgmma at line "
                          f"{op.loc.line} is not a valid tile")
        return
    if not (isinstance(a, SmemView) and isinstance(b, SmemView)):
        w.not_modelled(op, "wgmma with A in registers")
        acc.tag = FragTag("unknown", why_unknown="wgmma with A in registers is not modelled")
        return
    if acc.tag.state == "unknown":
        return
    if acc.tag.state == "empty" and acc.tag.init != 0:
        what = "an unknown value" if acc.tag.init is None else repr(acc.tag.init)
        loc = acc.tag.init_loc or op.loc
        w.report(Finding("tag.accumulator-init", "error",
                         f"the accumulator starts from {what}, not 0, before this wgmma adds "
                         f"A x B into it (line {op.loc.line}): every element carries that "
                         f"offset", loc, "assign",
                         "reset the accumulator with assign(acc, 0.0) (or init=0.0)"))
        acc.tag = FragTag("unknown", why_unknown="the accumulator does not start from 0")
        return
    m, n, k = op.attrs["m"], op.attrs["n"], op.attrs["k"]
    pr, pc = w.pos["pr"], w.pos["pc"]
    b_major = "K" if op.attrs.get("b_major", "k") == "k" else "MN"
    A = operands.read(w, op, a, "K", m, k, "a", pr)
    B = operands.read(w, op, b, b_major, n, k, "b", pc) if A is not None else None
    if A is None or B is None:
        acc.tag = FragTag("unknown", why_unknown="an operand of the wgmma at line "
                          f"{op.loc.line} could not be verified")
        return
    scope = w.scope_vars()
    accumulated = tuple(v for v in scope if v not in acc.tag.reset_scope)
    sub = report.thread_vars(w, acc.layout)
    kk = w.pos["kk"]
    tb = [z3.ULT(kk, A.kinstr)]
    if sub is not None:
        pairs, t, v, bounds = sub
        inst = lambda x: z3.substitute(bv(x), *pairs)
        tb += bounds
    else:
        inst = lambda x: bv(x)
        tb += [z3.ULT(pr, m), z3.ULT(pc, n)]
    base = (w.role.warpgroup * 128) if w.role else 0
    wg = w.role.warpgroup if w.role else None
    copies = w.ctx.copy_vars(accumulated, "'") if accumulated else []
    earlier = lambda x: z3.substitute(bv(x), *copies) if copies else bv(x)
    row = acc.tag.fields.get("row") if acc.tag.state == "data" else A.mn[0]
    col = acc.tag.fields.get("col") if acc.tag.state == "data" else B.mn[0]
    if row is None or col is None:
        acc.tag = FragTag("unknown", why_unknown="accumulator without row/col tags")
        return
    row0, col0 = z3.substitute(bv(row), (kk, z3.BitVecVal(0, 64))), \
        z3.substitute(bv(col), (kk, z3.BitVecVal(0, 64)))
    k_hint = "load A and B tiles at the same k coordinate and read the same stage"
    if not holds(w.ctx, bv(A.k_extent) == bv(B.k_extent)):
        axis = "rows" if b_major == "MN" else "columns"
        fix = "K-major: use b_major='k'" if b_major == "MN" else "MN-major: use b_major='mn'"
        k_hint = (f"b_major={op.attrs.get('b_major', 'k')!r} contracts B's {axis}, which do "
                  f"not have A's K extent: the tile of B was loaded {fix}")
    def claims_of(j):
        inside = z3.And(inst(A.inside[j]), inst(B.inside[j]))   # else one factor is 0
        return [z3.Implies(inside, inst(lhs) == inst(rhs))
                for lhs, rhs in ((A.k[j], B.k[j]), (A.mn[j], earlier(row0)),
                                 (B.mn[j], earlier(col0)))]
    # every instruction's three claims in one query; one by one (to name the instruction
    # and the claim that fails) only when that does not go through
    # (with every fact: the claims of every instruction reach nearly all of the step's
    # variables, so a first try with the facts of their variables alone only repeated a
    # failing query: 0.15 s of schedule_by_block's, 0.3 s of the split-K GEMM's check)
    together = len(A.k) > 1 and holds(w.ctx, z3.And(*[c for j in range(len(A.k))
                                                      for c in claims_of(j)]), [*w.path, *tb],
                                      confined_first=False)
    # when they do not, one minimised search for a model that breaks any of them. It
    # breaks some kinds of claim; the kinds before the first of those (k, row, col) are
    # proved over every instruction (else they are searched one claim at a time below,
    # as the first kind to report), and the first kind it breaks is reported with it, at
    # the first instruction it breaks (no proof of the later kinds is needed: the
    # accumulator's tag is given up at the first failure). No model: every claim holds
    # once product atoms are products
    kind_holds, found = [False] * 3, None
    if not together and len(A.k) > 1:
        if any(w.reported(check, op.loc) for check in CHECKS):   # found on an earlier visit
            acc.tag = FragTag("unknown", why_unknown=f"wgmma failed at line {op.loc.line}")
            return
        claims = [(j, kind, c) for j in range(len(A.k)) for kind, c in enumerate(claims_of(j))]
        model = report.find(w, z3.Not(z3.And(*[c for *_, c in claims])), scope, tb)
        broken = [] if model is None else \
            [(j, kind) for j, kind, c in claims
             if z3.is_false(model.eval(c, model_completion=True))]
        if model is None:
            kind_holds = [True] * 3
        elif broken:
            first = min(kind for _, kind in broken)
            kind_holds[:first] = [holds(w.ctx, z3.And(*[c for _, kind, c in claims
                                                       if kind == earlier_kind]),
                                        [*w.path, *tb]) for earlier_kind in range(first)]
            if all(kind_holds[:first]):
                found = (min(j for j, kind in broken if kind == first), first, model)
    for j in range(0 if together else len(A.k)):
        inside = z3.And(inst(A.inside[j]), inst(B.inside[j]))   # else one factor is 0
        checks = (
            ("tag.wgmma-k", A.k[j], B.k[j], "k", "A.k == B.k",
             "the k slices of A and B that meet here differ", k_hint),
            ("tag.wgmma-row", A.mn[j], earlier(row0), "row", "A.row == D.row",
             "the accumulator row meets a different row of A than it did",
             "keep the A tile's row coordinate fixed over the k loop and reset the "
             "accumulator (assign(acc, 0.0)) for every output tile"),
            ("tag.wgmma-col", B.mn[j], earlier(col0), "col", "B.row == D.col",
             "the accumulator column meets a different row of B than it did",
             "keep the B tile's row coordinate fixed over the k loop and reset the "
             "accumulator for every output tile"),
        )
        for kind, (check, lhs, rhs, field, rel, say, hint) in enumerate(checks):
            if found is not None:
                if found[:2] != (j, kind):
                    continue
                model = found[2]
            else:
                if kind_holds[kind]:
                    continue
                claim = z3.Implies(inside, inst(lhs) == inst(rhs))
                if holds(w.ctx, claim, [*w.path, *tb]):
                    continue
                if w.reported(check, op.loc):     # found on an earlier visit: no new search
                    acc.tag = FragTag("unknown",
                                      why_unknown=f"{check} failed at line {op.loc.line}")
                    return
                model = report.find(w, z3.Not(claim), scope, tb)
                if model is None:
                    continue
            cex = report.counterexample(
                w, model, scope, layout=acc.layout, warpgroup=wg, thread_base=base,
                elements=(_element(w, model, inst, A, B, j, acc),),
                extra_iter={"instruction": j, "kk": value(model, kk),
                            **({f"{w.ctx.vars[n].name} (earlier)": value(model, c)
                                for n, (_, c) in zip(accumulated, copies)}
                               if check != "tag.wgmma-k" else {})})
            w.report(Finding(check, "error",
                             f"wgmma breaks {rel}: {say}: {value(model, inst(lhs))} vs "
                             f"{value(model, inst(rhs))}",
                             op.loc, "wgmma", hint, cex))
            acc.tag = FragTag("unknown", why_unknown=f"{check} failed at line {op.loc.line}")
            return
    routed = meet.wgmma(w, op, A, B, inst, tb, scope, acc, wg, base)
    if routed is None:               # a routing field differs (reported)
        acc.tag = FragTag("unknown", why_unknown=f"tag.routing failed at line {op.loc.line}")
        return
    # a product is added only while its site runs: under the conditions of the ifs
    # around it (`if k % 2 == 0: wgmma(...)` adds every other k step only) and, in a part
    # of a split loop, for the part's own counters (the path holds both). All of them,
    # not only the ifs inside the accumulation loops: the walk does not join an if's
    # branches, so an if around an accumulator reset each step (flash attention's scores
    # under `if j % 2 == 0`) would be taken as always run. Those that stay the same from
    # the reset to a use are its guard, asked only at a use outside them
    varying, guard = w.site_conditions(accumulated)
    new = acc.tag.contributions + [
        Contribution(tuple(A.k),
                     tuple(z3.And(a, b, *varying) for a, b in zip(A.inside, B.inside)),
                     A.k_extent, accumulated, A.kinstr, op.loc, A.mn_real, B.mn_real,
                     guard=guard)]
    acc.tag = FragTag("data", {"row": row0 if acc.tag.state != "data" else row,
                               "col": col0 if acc.tag.state != "data" else col,
                               **(routed if acc.tag.state != "data" else
                                  meet.kept(acc.tag.fields))},
                      f"{A.tensor} x {B.tensor}", new, acc.tag.reset_scope)


def _element(w, model, inst, A, B, j, acc) -> ElementTag:
    pos = (value(model, inst(w.pos["pr"])), value(model, inst(w.pos["pc"])))
    actual = {"a.row": value(model, inst(A.mn[j])), "a.k": value(model, inst(A.k[j])),
              "b.row": value(model, inst(B.mn[j])), "b.k": value(model, inst(B.k[j]))}
    expected = {"a.k == b.k": value(model, inst(A.k[j]))}
    return ElementTag("acc", pos, actual, expected)
