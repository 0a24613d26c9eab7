"""wgmma with A in registers (o += P V in attention): the GEMM invariants with A read from
a fragment, and the softmax accumulator's bookkeeping.

A is a fragment in a register-A layout (the frontend refuses any other; convert.py checks
a conversion into it moved no data between threads). Its element (m, k) of instruction j
is at position (pr = m, pc = j * K_instr + kk) of its tile, so its tags give A.row and A.k
(P's row and column: the query and the key). B is read from shared memory as in wgmma.py
(stage, descriptor and layout checks of operands.py). For every accumulator element
(thread, register), instruction j and kk whose product can be non-zero (B inside its
tensor, A not masked): A.k == B.k (P.key == V.key), A.row == D.row and B.row == D.col.
The contribution's key terms and non-zero condition go to the accumulator (keys.py checks
them at o / l).

Softmax: an accumulator that holds P V relative to a max (SoftAcc) only takes a P that is
exp2(x - m) relative to the same max, of the next block."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.verify.finding import ElementTag, Finding
from argus.verify.smt import bv, holds, value

from . import operands, wgmma
from .meaning import (Exp, Hole, SoftAcc, Span, differs, empty, eq, resolve, same_series,
                      span_text, state)
from .values import Contribution, FragTag, Fragment, SmemView
from .violations import refute


def mma(w, op: Op) -> None:
    a = w.value(op.arg("a"))
    if not isinstance(a, Fragment):
        wgmma.mma(w, op)
        return
    if w.phase != "check":
        return
    acc, b = w.value(op.arg("acc")), w.value(op.arg("b"))
    if not isinstance(acc, Fragment):
        return
    if not isinstance(b, SmemView) or a.tag.state != "data" or acc.tag.state == "unknown" \
            or not {"row", "col"} <= a.tag.fields.keys():
        if a.tag.state != "unknown" and acc.tag.state != "unknown":
            # (an unknown operand was reported where it became unknown)
            w.not_modelled(op, "wgmma with a register A that carries no row and column "
                               "tags")
        acc.tag = FragTag("unknown", why_unknown=f"an operand of the wgmma at line "
                          f"{op.loc.line} is not known")
        return
    if acc.tag.state == "empty" and acc.tag.init != 0:
        w.report(Finding("tag.accumulator-init", "error",
                         f"the accumulator starts from {acc.tag.init!r}, not 0, before this "
                         f"wgmma adds A x B into it", acc.tag.init_loc or op.loc, "assign",
                         "reset the accumulator with assign(acc, 0.0) (or init=0.0)"))
        acc.tag = FragTag("unknown", why_unknown="the accumulator does not start from 0")
        return
    m, n, k = op.attrs["m"], op.attrs["n"], op.attrs["k"]
    pr, pc, kk = w.pos["pr"], w.pos["pc"], w.pos["kk"]
    b_major = "K" if op.attrs.get("b_major", "k") == "k" else "MN"
    B = operands.read(w, op, b, b_major, n, k, "b", pc)
    if B is None:
        acc.tag = FragTag("unknown", why_unknown=f"operand B of the wgmma at line "
                          f"{op.loc.line} could not be verified")
        return
    kinstr = B.kinstr
    mask = a.tag.meaning.series.mask if isinstance(a.tag.meaning, Exp) else None
    a_k, a_row, a_live = [], [], []
    for j in range(k // kinstr):
        at = [(pc, bv(j * kinstr) + kk)]
        a_k.append(z3.substitute(bv(a.tag.fields["col"]), *at))
        a_row.append(z3.substitute(bv(a.tag.fields["row"]), *at))
        a_live.append(z3.substitute(mask.term, *at) if mask is not None else z3.BoolVal(True))
    if not _softmax(w, op, acc, a):
        return
    soft = acc.tag.meaning if isinstance(acc.tag.meaning, SoftAcc) else None
    drow = resolve(soft.row) if soft else (acc.tag.fields.get("row") if acc.tag.state == "data"
                                           else None)
    dcol = resolve(soft.col) if soft else (acc.tag.fields.get("col") if acc.tag.state == "data"
                                           else None)
    zero = [(kk, z3.BitVecVal(0, 64))]
    row0 = z3.substitute(a_row[0], *zero)
    col0 = z3.substitute(bv(B.mn[0]), *zero)
    if drow is None or isinstance(drow, Hole):
        if isinstance(drow, Hole):
            drow.bind(row0)
        drow = row0
    if dcol is None or isinstance(dcol, Hole):
        if isinstance(dcol, Hole):
            dcol.bind(col0)
        dcol = col0
    scope = w.scope_vars()
    accumulated = tuple(v for v in scope if v not in acc.tag.reset_scope)
    for j in range(k // kinstr):
        live = z3.And(a_live[j], B.inside[j])
        checks = (
            ("tag.wgmma-k", a_k[j], B.k[j], "A.k == B.k (P.key == V.key)",
             "the key of P's column and the key of V's row that meet here differ",
             "P of key block j meets the V tile of key block j: load V at the block of K "
             "and read the same stage"),
            ("tag.wgmma-row", a_row[j], drow, "A.row == D.row",
             "the accumulator row meets a different row of P than it holds",
             "keep P's rows (the query rows) fixed for the accumulator"),
            ("tag.wgmma-col", B.mn[j], dcol, "B.row == D.col",
             "the accumulator column meets a different column of V than it holds",
             "keep the V tile's column coordinate fixed over the key loop"),
        )
        for check, lhs, rhs, rel, say, hint in checks:
            bad = z3.And(live, bv(lhs) != bv(rhs))
            model = refute(
                w, op, check, bad, layout=acc.layout, rows=m, cols=n,
                extra=[z3.ULT(kk, kinstr)],
                message=lambda mod, inst, lhs=lhs, rhs=rhs, rel=rel, say=say, j=j: (
                    f"wgmma breaks {rel}: {say}: {value(mod, inst(bv(lhs)))} vs "
                    f"{value(mod, inst(bv(rhs)))} (k-step {j}, kk {value(mod, kk)})"),
                hint=hint,
                elements=lambda mod, inst, j=j: [ElementTag(
                    "acc", (value(mod, inst(pr)), value(mod, inst(pc))),
                    {"a.row": value(mod, inst(a_row[j])), "a.k": value(mod, inst(a_k[j])),
                     "b.row": value(mod, inst(bv(B.mn[j]))), "b.k": value(mod, inst(bv(B.k[j])))},
                    {"a.k == b.k": value(mod, inst(a_k[j]))})])
            if model is not None:
                acc.tag = FragTag("unknown", why_unknown=f"{check} failed at line {op.loc.line}")
                return
    # the products are added only under the ifs around the site and, in a part of a
    # split loop, for the part's counters (the path holds both; wgmma.mma: the guard)
    varying, guard = w.site_conditions(accumulated)
    contrib = Contribution(tuple(a_k), tuple(z3.And(x, y, *varying)
                                             for x, y in zip(a_live, B.inside)),
                           B.k_extent, accumulated, kinstr, op.loc, k_window=B.k_window,
                           guard=guard)
    # the same keys as one term over the instruction index jv (keys.py: affine in it)
    jv = w.pos["j"]
    at = [(pc, bv(kinstr) * jv + kk)]
    inside = _uniform(B.inside, kk, kinstr, jv)
    if inside is None:
        inside = B.inside[-1]
        for j in range(len(B.inside) - 2, -1, -1):
            inside = z3.If(jv == j, B.inside[j], inside)
    live = z3.substitute(mask.term, *at) if mask is not None else z3.BoolVal(True)
    state(w).keygens[id(contrib)] = (z3.substitute(bv(a.tag.fields["col"]), *at),
                                     z3.And(live, inside, *varying), k // kinstr)
    new = FragTag("data", {"row": drow, "col": dcol}, f"{a.tag.source or 'P'} x {B.tensor}",
                  acc.tag.contributions + [contrib], acc.tag.reset_scope,
                  meaning=acc.tag.meaning)
    if isinstance(new.meaning, SoftAcc):
        new.meaning = SoftAcc(new.meaning.ref, new.meaning.span, new.meaning.series, drow, dcol)
    acc.tag = new


def _softmax(w, op, acc: Fragment, a: Fragment) -> bool:
    """The accumulator's softmax meaning after adding P V; False (reported) on a mismatch."""
    soft, p = acc.tag.meaning, a.tag.meaning
    if soft is None and not isinstance(p, Exp):
        return True                      # a plain GEMM with A in registers
    if not isinstance(p, Exp):
        refute(w, op, "tag.softmax-exp", True,
               message=lambda m, inst: ("the accumulator holds products P V relative to the "
                                        "running max, but this A is not p = exp2(x - m)"),
               hint="feed the wgmma with p = exp2(masked - m_new), cast and converted to the "
                    "register-A layout")
        acc.tag = FragTag("unknown", why_unknown="P V with a P that is not exp2(x - m)")
        return False
    series = p.series
    block = Span(series.loop, series.block, bv(series.block) + 1) if series.loop else \
        Span(None, 0, 1)
    if soft is None:
        if acc.tag.state == "empty":
            acc.tag.meaning = SoftAcc(p.ref, Span(block.loop, block.lo, block.lo), series,
                                      Hole("row"), Hole("col"))
            soft = acc.tag.meaning
        else:
            refute(w, op, "tag.softmax-exp", True,
                   message=lambda m, inst: ("adds P V into an accumulator that holds other "
                                            "products"),
                   hint="accumulate P V into its own accumulator, reset to 0 before the loop")
            acc.tag = FragTag("unknown", why_unknown="P V added to another sum")
            return False
    if not same_series(soft.series, series):
        refute(w, op, "tag.softmax-exp", True,
               message=lambda m, inst: ("adds P V of another score tile into the "
                                        "accumulator"),
               hint="accumulate the P of the tile whose max and sum the softmax keeps")
        acc.tag = FragTag("unknown", why_unknown="P V of another tile")
        return False
    bad = z3.And(z3.Not(empty(soft.span)), differs(w, soft.ref, p.ref))
    layout = acc.layout
    model = refute(
        w, op, "tag.softmax-rescale", bad, layout=layout, rows=acc.shape[0], cols=acc.shape[1],
        message=lambda m, inst: (
            f"adds P = exp2(x - m) with m = {p.ref.describe(m)} into the accumulator, which "
            f"holds the products of {span_text(soft.span, m)} relative to m = "
            f"{soft.ref.describe(m)}: the accumulator must be rescaled to the new max first"),
        hint="rescale before the wgmma: assign(o_acc, o_acc * alpha) with alpha = "
             "exp2(m_i - m_new)")
    if model is not None:
        acc.tag = FragTag("unknown", why_unknown="P V relative to another max")
        return False
    if soft.span.loop != block.loop or not holds(w.ctx, eq(soft.span.hi, block.lo), w.path):
        refute(w, op, "tag.softmax-exp", True, layout=layout, rows=acc.shape[0],
               cols=acc.shape[1],
               message=lambda m, inst: (f"adds P V of {span_text(block, m)} to the products "
                                        f"of {span_text(soft.span, m)}: not the next block"),
               hint="add each block's P V once, in the iteration that computes its P")
        acc.tag = FragTag("unknown", why_unknown="P V of a block out of order")
        return False
    acc.tag.meaning = SoftAcc(p.ref, Span(block.loop, soft.span.lo, block.hi), series,
                              soft.row, soft.col)
    return True


def _uniform(terms, kk, kinstr, jv):
    """One term over the instruction index jv for per-instruction terms that are one
    function of the k offset (term j is term 0 with kk := kinstr * j + kk), else None: an
    If-chain over the instructions makes the key-coverage queries much harder."""
    step = [(kk, bv(kinstr) * jv + kk)]
    first = z3.substitute(terms[0], *step)
    for j, t in enumerate(terms[1:], 1):
        at_j = z3.substitute(first, (jv, z3.BitVecVal(j, 64)))
        if not z3.is_true(z3.simplify(at_j == t)):
            return None
    return first
