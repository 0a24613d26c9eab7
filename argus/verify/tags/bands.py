"""A shared-memory stage filled by several TMA loads: bands of rows, multicast, clusters.

The 2-block cluster GEMM fills each block's B stage with two loads: every block loads one
band of the shared B tile (`tile(b_s[s], (BN // CM, BK), (rank, 0))`) and multicasts it
into both blocks (`multicast=(1 << CM) - 1`). What a wgmma of block r reads at stage
element (R, C) is then the element that *some* load put there, and it is right only if:

  - exactly one load of this step covers (R, C) in block r (`tag.stage-fill`): a piece
    is a (load, issuing block b) pair; it covers (R, C) in block r when bit r of its mask
    (evaluated in block b; a plain load: b == r) is set, (R, C) lies in its band
    (R - row0 < rows, C - col0 < cols, unsigned) and the conditions of the ifs around it
    hold. None: the wgmma reads stale shared memory (a missing half, a mask without
    block r); two: two loads write the same bytes (two blocks multicasting into one band);
  - the element it put there is the one the operand means: the piece's element is its
    source box origin (as block b computes it) + ((R, C) - band origin), and the wgmma's
    A.k == B.k, A.row == D.row, B.row == D.col and the stores then judge it (a band of
    the wrong rank, of the wrong k step, of another block's tile).

Symbolic: the reader's rank (cluster.py), R and C (through the descriptor read of every
instruction, operands._layout with the stage's own coordinates), every loop counter and
size. Enumerated: the issuing block b (0 .. C-1) and the loads of the buffer. Each piece
is the issuer's copy of the load's terms (cluster.Issuer): with a cluster walk the same
tile and step as the reader, the rank b; without one, another block's tile.

The layout of a band is the stage's (tma.StageLayout): the backend writes a band of rows
[r0, r0 + h) with the stage's chunk stride, so the byte of element (R, C) does not depend
on which load wrote it (that the band starts on a swizzle atom is protocol.swizzle-
alignment's job). Loads of one op are counted once per distinct issuer terms: several
warpgroups issuing the same box write the same bytes with the same data (their bytes
are the protocol pass's business).
"""

from __future__ import annotations

from dataclasses import replace

import z3

from argus.verify.finding import ElementTag, Finding
from argus.verify.smt import bv, concrete, holds, value

from . import cluster, heads, operands, report
from .values import GlobalTile, SmemView, Writer


def writers_of(w, buffer: str) -> list[Writer]:
    """The TMA loads into `buffer`, one per op and distinct terms."""
    out, seen = [], set()
    for x in w.writers:
        if x.view.buffer.name != buffer:
            continue
        key = (x.loc, str(x.view.offset), str(x.src.origin), str(x.multicast), str(x.path))
        if key not in seen:
            seen.add(key)
            out.append(x)
    return out


def needed(w, view: SmemView) -> bool:
    """Whether the stage of `view` is not simply one plain load of the whole stage."""
    xs = writers_of(w, view.buffer.name)
    if len(xs) != 1:
        return len(xs) > 1
    x = xs[0]
    whole = tuple(concrete(o) for o in x.view.offset) == (0,) * len(x.view.offset) \
        and tuple(x.view.shape) == tuple(x.view.buffer.shape)
    return x.multicast is not None or not whole


def read(w, op, view: SmemView, major: str, mn_extent: int, k_total: int, name: str, mn_var):
    """operands.read for a stage filled by several loads: OperandTags, or None (reported)."""
    buf = view.buffer
    xs = writers_of(w, buf.name)
    scope = set(w.scope_vars())
    for x in xs:
        if not set(x.scope) <= scope:
            w.not_modelled(op, f"the loops around the TMA load at line {x.loc.line} do not "
                               "match the loops around the read")
            return None
        if len(x.view.offset) != 2 or len(x.src.origin) != 2:
            w.not_modelled(op, "TMA loads that are not 2-D")
            return None
    if len({x.src.tensor for x in xs}) != 1:
        w.not_modelled(op, f"operand {name}: the stages of {buf.name} are filled from "
                           "different tensors")
        return None
    issuers = cluster.issuers(w)
    for x in xs:
        for x_b in _stage_writers(x, issuers):
            if not operands._stage_ok(w, op, view, x_b, name):
                return None
    # the descriptor read of every instruction, as coordinates in the stage itself
    stand_in = Writer(SmemView(buf, view.stage, (0, 0), buf.shape, view.stage_loc),
                      GlobalTile(f"{buf.name}[stage]", buf.shape, (0, 0), buf.shape, xs[0].loc),
                      xs[0].barrier, (), xs[0].loc)
    at = operands._layout(w, op, view, stand_in, major, mn_extent, k_total, name, mn_var)
    if at is None:
        return None
    pieces = [_Piece(w, x, iss) for x in xs for iss in issuers]
    src = xs[0].src
    bounds = [z3.ULT(mn_var, mn_extent), z3.ULT(w.pos["kk"], at.kinstr)]
    coverage = []
    for j in range(len(at.mn)):
        R, C = (at.mn[j], at.k[j]) if major == "K" else (at.k[j], at.mn[j])
        # the pieces whose band can hold an element of instruction j (a band of k rows
        # holds whole instructions: one piece each, no case split left for the solver)
        near = [p for p in pieces if _may_hold(p, R, C, bounds)]
        coverage.append((j, R, C, near, [p.covers(R, C) for p in near]))
    if not _filled_once(w, op, buf, name, coverage, bounds, mn_var, pieces):
        return None
    mn_terms, k_terms, inside_terms = [], [], []
    for j, R, C, near, covers in coverage:
        elems = [p.element(R, C) for p in near]
        e0, e1 = _select(covers, [e[0] for e in elems]), _select(covers, [e[1] for e in elems])
        inside = z3.And(z3.ULT(e0, bv(src.extents[0])), z3.ULT(e1, bv(src.extents[1])))
        tag1 = heads.column(w, src.tensor, e1)      # a declared head's: its KV head's column
        mn_terms.append(e0 if major == "K" else tag1)
        k_terms.append(tag1 if major == "K" else e0)
        inside_terms.append(inside)
    k_extent = heads.extent(w, src.tensor, 1, src.extents[1]) if major == "K" else \
        src.extents[0]
    return operands.OperandTags(src.tensor, mn_terms, k_terms, inside_terms, k_extent,
                                at.kinstr)


def _stage_writers(x: Writer, issuers) -> list[Writer]:
    """The load as each issuing block sees its stage and barrier (once when the rank does
    not enter them)."""
    out = []
    for iss in issuers:
        stage, index = iss.term(x.view.stage), iss.term(x.barrier.index)
        if out and _same(stage, out[0].view.stage) and _same(index, out[0].barrier.index):
            continue
        out.append(replace(x, view=replace(x.view, stage=stage),
                           barrier=replace(x.barrier, index=index)))
    return out


def _same(a, b) -> bool:
    return z3.simplify(bv(a) == bv(b)).eq(z3.BoolVal(True))


def _may_hold(p, R, C, bounds) -> bool:
    """Whether the band of piece p can hold an element instruction j reads, asked with the
    element's bounds alone (fewer facts than the kernel's: "no" is still sound)."""
    s = z3.Solver()
    s.set("timeout", 500)
    s.add(*bounds, p.in_band(R, C))
    return s.check() != z3.unsat


def _select(conds, values):
    out = bv(values[-1])
    for c, v in zip(reversed(conds[:-1]), reversed(values[:-1])):
        out = z3.If(c, bv(v), out)
    return z3.simplify(out)


class _Piece:
    """One load as issued by one block of the cluster, seen from the reading block."""

    def __init__(self, w, x: Writer, iss: cluster.Issuer):
        self.x, self.b, self.iss = x, iss.b, iss
        self.off = tuple(bv(iss.term(o)) for o in x.view.offset)
        self.box = tuple(x.view.shape)
        self.origin = tuple(bv(iss.term(o)) for o in x.src.origin)
        reader = bv(cluster.rank(w)) if w.cluster.size > 1 else bv(0)
        if x.multicast is None:
            lands = reader == iss.b
        else:
            mask = bv(iss.term(x.multicast))
            lands = z3.Extract(0, 0, z3.LShR(mask, reader)) == 1
        path = z3.And(*x.path) if x.path else z3.BoolVal(True)
        self.lands = z3.simplify(z3.And(lands, iss.when(path)))
        self.mask = x.multicast

    def in_band(self, R, C):
        return z3.And(z3.ULT(bv(R) - self.off[0], self.box[0]),
                      z3.ULT(bv(C) - self.off[1], self.box[1]))

    def covers(self, R, C):
        return z3.And(self.lands, self.in_band(R, C))

    def element(self, R, C):
        return (self.origin[0] + (bv(R) - self.off[0]), self.origin[1] + (bv(C) - self.off[1]))


def _count(covers):
    return z3.simplify(sum((z3.If(c, bv(1), bv(0)) for c in covers), bv(0)))


def _filled_once(w, op, buf, name, coverage, bounds, mn_var, everyone) -> bool:
    """Every element a wgmma instruction reads is written by exactly one piece."""
    claims = [_count(covers) == 1 for *_, covers in coverage]
    if holds(w.ctx, z3.And(*claims), [*w.path, *bounds]):
        return True
    for (j, R, C, near, covers), claim in zip(coverage, claims):
        if holds(w.ctx, claim, [*w.path, *bounds]):
            continue
        scope = w.scope_vars()
        model = report.find(w, z3.Not(claim), scope, bounds,
                            minimise_first=(mn_var, w.pos["kk"]))
        if model is None:
            continue
        _report(w, op, buf, name, near, everyone, j, R, C, covers, model, scope)
        return False
    return True


def _report(w, op, buf, name, pieces, everyone, j, R, C, covers, model, scope) -> None:
    r = value(model, cluster.rank(w)) if w.cluster.size > 1 else 0
    row, col = value(model, R), value(model, C)
    hit = [p for p, c in zip(pieces, covers) if z3.is_true(model.eval(c, model_completion=True))]
    band = [p for p in pieces if z3.is_true(model.eval(p.in_band(R, C), model_completion=True))]
    where = f" of block rank {r} of the cluster" if w.cluster.size > 1 else ""
    element = f"{buf.name}[stage][{row}, {col}]{where}"

    def who(p):
        rank = f"block rank {p.b}'s " if w.cluster.size > 1 else "the "
        rows = value(model, p.off[0])
        cols = value(model, p.off[1])
        to = ""
        if p.mask is not None:
            bits = value(model, p.iss.term(p.x.multicast))
            to = f", multicast to ranks {[i for i in range(w.cluster.size) if bits >> i & 1]}"
        return (f"{rank}load at line {p.x.loc.line} (rows {rows}..{rows + p.box[0] - 1}, "
                f"columns {cols}..{cols + p.box[1] - 1}{to})")
    if not hit:
        culprit = band[0] if band else (pieces or everyone)[0]
        told = ("; " + ", ".join(who(p) for p in band) + " would cover it but does not "
                "reach this block") if band else ""
        message = (f"wgmma operand {name} (line {op.loc.line}) reads {element}, which no TMA "
                   f"load of this step writes: it holds stale shared memory{told}")
        hint = ("fill the whole stage in every block: with multicast, each block's band "
                "must reach every block of the cluster (multicast=(1 << CM) - 1) and the "
                "bands must tile the stage (tile(b_s[s], (rows // CM, cols), (rank, 0)))")
    else:
        culprit = hit[1]
        message = (f"{element} (read by wgmma operand {name} at line {op.loc.line}) is "
                   f"written by {len(hit)} TMA loads of this step: "
                   + " and ".join(who(p) for p in hit))
        hint = ("give every block its own band of the stage: tile(b_s[s], (rows // CM, "
                "cols), (rank, 0)), loaded from the rank's rows of the source")
    cex = report.counterexample(
        w, model, scope, warpgroup=w.role.warpgroup if w.role else None,
        elements=(ElementTag(f"{buf.name}[stage]", (row, col),
                             {"writers": len(hit),
                              **({"written by ranks": [p.b for p in hit]}
                                 if w.cluster.size > 1 else {})},
                             {"writers": 1}),),
        extra_iter={"instruction": j, **({"rank": r} if w.cluster.size > 1 else {})})
    w.report(Finding("tag.stage-fill", "error", message, culprit.x.loc, "tma_load", hint, cex))

