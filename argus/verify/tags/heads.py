"""Heads: `heads(X, cols, group=G)` says that the columns of tensor X are heads of `cols`
columns and that head h of X meets head h // G of the tensors declared with group 1 (GQA:
query head h reads KV head h // G; in bshd Q and O are (B*SQ, HQ*D), K and V
(B*SK, HK*D)).

Tags name absolute tensor columns. Without a declaration, query head h's column d
(h * D + d) never equals the column (h // G) * D + d of the KV head it is contracted
with, so A.k == B.k fails on a correct GQA kernel. With one, column c of X is tagged with
the column of the KV head it meets, (c // cols // G) * cols + c % cols (the identity for
G = 1): the head-dim index d and the KV head. The wgmma contract A.k == B.k stays an
equality of those tags, so it now says "the same d of the KV head this query head
reads": a K tile of another head is still a `tag.wgmma-k`, and a GEMM (no declaration)
is unchanged.

The mapped tag forgets which of the G query heads a column came from, so the head itself
is checked on the data flow instead (`check_store`): every load of a declared tensor that
feeds a value stored into a declared tensor reads one head, and that head is the one the
destination's head names: the same head when the groups are equal (Q's head h for O's
head h), else the same KV head (K's and V's head h // G for O's head h). A violation is
`tag.operand-head`, with the block and the heads in the counterexample.
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from argus.ir.nodes import Op
from argus.verify.finding import ElementTag, Finding
from argus.verify.smt import bv, holds, value

from . import report, scalars


@dataclass(frozen=True)
class Heads:
    cols: int
    group: int


def table(w) -> dict:
    """tensor name -> Heads, for the tensors the kernel declares."""
    return w.__dict__.setdefault("_heads", {})


def declare(w, op: Op) -> None:
    base = w.value(op.arg("tensor"))
    if not (isinstance(base, tuple) and base and base[0] == "tensor"):
        w.not_modelled(op, "heads() of anything but a kernel tensor")
        return
    table(w)[base[1]] = Heads(int(op.attrs["cols"]), int(op.attrs["group"]))


def of(w, tensor: str):
    return table(w).get(tensor)


def column(w, tensor: str, col):
    """The tag of column `col` (a term) of `tensor`: the column of the KV head it meets."""
    h = of(w, tensor)
    if h is None or h.group == 1:
        return col
    c = bv(col)
    return z3.UDiv(c, h.cols * h.group) * h.cols + z3.URem(c, h.cols)


def tile_column(w, tile, offset):
    """The tag of column `offset` (a term below the box's width) of global tile `tile`:
    for a tile inside one head, the mapped first column plus the offset, which stays
    affine in the offset (the k coverage divides it by its coefficients); else
    `column` of the element's column."""
    h = of(w, tile.tensor)
    col = bv(tile.origin[1]) + bv(offset)
    if h is None or h.group == 1:
        return col
    if head_of(w, tile) is None:
        return column(w, tile.tensor, col)
    o = tile.origin[1]
    first = scalars.binary(w.ctx, "add",
                           scalars.binary(w.ctx, "mul",
                                          scalars.binary(w.ctx, "floordiv", o,
                                                         h.cols * h.group), h.cols),
                           scalars.binary(w.ctx, "mod", o, h.cols))
    return bv(first) + bv(offset)


def extent(w, tensor: str, axis: int, ext):
    """The extent of the tag's axis: a declared tensor's columns name the columns of the KV
    heads, extent // group (origin.py compares it with other tensors' extents)."""
    h = of(w, tensor)
    if axis != 1 or h is None or h.group == 1:
        return ext
    return scalars.binary(w.ctx, "floordiv", ext, h.group)


def head_of(w, tile):
    """The head a global tile of a declared tensor lies in (a term), or None when the tile
    may cross a head boundary (or its tensor is not declared)."""
    h = of(w, tile.tensor)
    if h is None or len(tile.box) != 2:
        return None
    col0 = bv(tile.origin[1])
    memo = w.__dict__.setdefault("_heads_tiles", {})
    key = (tile.tensor, col0.get_id(), tile.box[1], tuple(p.get_id() for p in w.path))
    if key not in memo:          # (the memo keeps col0 alive: its id stays its own)
        one = z3.ULE(z3.URem(col0, h.cols) + tile.box[1], h.cols)
        memo[key] = (col0, holds(w.ctx, one, w.path))
    if not memo[key][1]:
        return None
    return z3.UDiv(col0, h.cols)


def check_store(w, op: Op, dst, src_reads, warpgroup) -> None:
    """Every load of a declared tensor that feeds the value stored into the declared
    tensor `dst` reads the head the relation names (see the module docstring).
    `src_reads`: the value's origin.Read's (None: not known)."""
    hd = of(w, dst.tensor)
    if hd is None:
        # a declaration changes what A.k == B.k compares: a value computed from a declared
        # tensor must land in a declared one, where the heads are checked, or the mapping
        # (which forgets the query head) is not checked at all
        fed = sorted({r.tensor for r in src_reads or () if of(w, r.tensor) is not None
                      and of(w, r.tensor).group > 1})
        if fed:
            w.not_modelled(op, f"the value stored into {dst.tensor} comes from "
                               f"{', '.join(fed)}, declared as heads with a group, but "
                               f"{dst.tensor} declares no heads, so the heads are not checked")
        return
    if src_reads is None:
        w.not_modelled(op, f"the loads the value stored into {dst.tensor} comes from are not "
                           f"known, so its heads cannot be checked")
        return
    dst_head = head_of(w, dst)
    reads = sorted((r for r in src_reads if of(w, r.tensor) is not None),
                   key=lambda r: (r.loc.line, r.loc.col))
    if reads and dst_head is None:
        w.not_modelled(op, f"a store into {dst.tensor} whose tile may cross a head of "
                           f"{hd.cols} columns")
        return
    done = w.__dict__.setdefault("_heads_reported", set())
    for read in reads:
        hr = of(w, read.tensor)
        tiles = [x.src for x in w.writers if x.loc == read.loc and x.src.tensor == read.tensor]
        if not tiles:
            w.not_modelled(op, f"the load of {read.tensor} at line {read.loc.line} is not a "
                               f"TMA load, so its head is not checked")
            continue
        for tile in tiles:
            src_head = head_of(w, tile)
            if src_head is None:
                w.not_modelled(op, f"the tile of {read.tensor} loaded at line "
                                                f"{read.loc.line} may cross a head of {hr.cols} "
                                   f"columns")
                continue
            dh_name = f"{dst.tensor}'s head"
            if hr.group == hd.group:
                want = dst_head
                claim = src_head == dst_head
                rel = "the same head"
            else:
                want = z3.UDiv(dst_head, hd.group) * hr.group
                claim = z3.UDiv(src_head, hr.group) == z3.UDiv(dst_head, hd.group)
                rel = (f"the KV head of its head, {dh_name} // {hd.group}" if hr.group == 1
                       else "the same KV head")
            if holds(w.ctx, claim, w.path):
                continue
            key = (read.loc, op.loc)
            if key in done:
                continue
            scope = w.scope_vars()
            model = report.find(w, z3.Not(claim), scope)
            if model is None:
                continue
            done.add(key)
            got, dh = value(model, src_head), value(model, dst_head)
            cex = report.counterexample(
                w, model, scope, warpgroup=warpgroup,
                elements=(ElementTag(dst.tensor, (), {f"{read.tensor}.head": got,
                                                      f"{dst.tensor}.head": dh},
                                     {f"{read.tensor}.head": value(model, want)}),))
            w.report(Finding(
                "tag.operand-head", "error",
                f"this load reads head {got} of {read.tensor}, but the value stored into "
                f"head {dh} of {dst.tensor} at line {op.loc.line} must come from head "
                f"{value(model, want)} of {read.tensor} ({rel}; "
                f"heads({read.tensor}, {hr.cols}, group={hr.group}), "
                f"heads({dst.tensor}, {hd.cols}, group={hd.group}))",
                read.loc, "tma_load",
                f"load {read.tensor} at the column block of the head that {dst.tensor}'s head "
                f"reads (GQA: query head h reads KV head h // G)", cex))
