"""Row gathers: `gather_tma(dst, X, rows, col, bar)` and `gather_cp_async(dst, X, rows, col,
bar)` (the token rows of an expert's slots into a shared-memory stage, by TMA boxes or by the
cp.async of every thread of a warpgroup: the same rows land in the same stage, completing
the same barrier) and `gather(X, rows, col, cols, layout)` (rows into registers).

Row r of the gathered box is X's row `rows.entry(r)`, the value of the index vector's
entry r (an uninterpreted function of the routing array it was loaded from); entries past
the routing array's segment read 0, so those rows are padding (meet.py, padding.py). The
gathered element carries the tag of X's element (row = the token, col) plus the routing
fields of the entry it was gathered by (its expert, token, choice, from the tag
assumptions about the routing array), and the entry itself (field `entry:<array>`: its coordinate
in the routing array, which the combine sums over: combine.py).

A stage gather is recorded as the writer of its stage like a TMA load (tma.py), its source
being a gathered tile; the wgmma operand rules then read it as any other tile. (Who arrives
on the barrier, and how many times, is the protocol pass's to check, not this one's.)"""

from __future__ import annotations

from argus.ir.nodes import Op
from argus.verify.smt import bv

from . import assumptions, scalars
from .routing import IndexVector
from .values import Barrier, FragTag, Fragment, GlobalTile, SmemView, Writer

ENTRY = "entry:"


def entry_field(source: str) -> str:
    """The internal tag field holding the coordinate of the routing entry in `source`."""
    return ENTRY + source


def gather_into_stage(w, op: Op) -> None:
    """gather_tma and gather_cp_async: the stage's writer is the gathered tile."""
    dst, src, rows, col, bar = (w.value(op.arg(n)) for n in ("dst", "src", "rows", "col", "bar"))
    if not (isinstance(dst, SmemView) and isinstance(src, tuple) and src[0] == "tensor"
            and isinstance(rows, IndexVector) and col is not None and isinstance(bar, Barrier)):
        w.not_modelled(op, "a gather whose stage, tensor, rows or barrier is not known")
        return
    if len(dst.shape) != 2 or rows.length != dst.shape[0]:
        w.not_modelled(op, "a gather of a number of rows other than the stage's")
        return
    box = tuple(dst.shape)
    tile = GlobalTile(src[1], box, (0, scalars.binary(w.ctx, "mul", col, box[1])),
                      w.tensors[src[1]], op.loc, rows=rows)
    if w.phase == "collect":
        w.writers.append(Writer(dst, tile, bar, w.scope_vars(), op.loc, tuple(w.path)))


def gather_load(w, op: Op) -> None:
    src, rows, col = (w.value(op.arg(n)) for n in ("src", "rows", "col"))
    t = op.result.type
    if not (isinstance(src, tuple) and src[0] == "tensor" and isinstance(rows, IndexVector)
            and col is not None and len(t.shape) == 2):
        w.not_modelled(op, "a gather whose tensor, rows or column tile is not known")
        w.env[op.result] = None
        return
    pr, pc = w.pos["pr"], w.pos["pc"]
    row = bv(rows.entry(pr))
    column = bv(scalars.binary(w.ctx, "mul", col, op.attrs["cols"])) + pc
    fields = {"row": row, "col": column}
    for name in assumptions.fields(w, src[1]):
        fields[name] = assumptions.field(w, src[1], name, (row, column))
    if rows.source is not None:
        for name in assumptions.fields(w, rows.source):
            fields[name] = assumptions.field(w, rows.source, name, (rows.coord(pr),))
        fields[entry_field(rows.source)] = rows.coord(pr)
    tag = FragTag("data", fields, src[1], reset_scope=w.scope_vars())
    w.env[op.result] = Fragment(t.shape, t.layout, tag, op.loc)
