"""Transfer rules of memory objects and data movement that is not asynchronous:
global tiles, shared-memory buffers and stages, fragments, loads, casts, elementwise
math and user tag fields."""

from __future__ import annotations

from dataclasses import replace

import z3

from argus.ir.nodes import Op
from argus.ir.ops import OPS
from argus.ir.types import FragmentType
from argus.verify.finding import Finding
from argus.verify.smt import bv, holds, value

from . import report, scalars
from .values import FragTag, Fragment, GlobalTile, SmemBuffer, SmemView


def tile(w, op: Op) -> None:
    base = w.value(op.arg("tensor"))
    coords = [w.value(c) for c in op.args("coords")]
    box = tuple(op.attrs["box"])
    if isinstance(base, tuple) and base[0] == "tensor":
        name = base[1]
        origin = tuple(scalars.binary(w.ctx, "mul", c, b) for c, b in zip(coords, box))
        w.env[op.result] = GlobalTile(name, box, origin, w.tensors[name], op.loc)
    else:
        w.env[op.result] = None


def smem_alloc(w, op: Op) -> None:
    t = op.result.type
    w.env[op.result] = SmemBuffer(op.result.name, t.stages, tuple(t.shape), t.dtype.bits // 8,
                                  t.swizzle)


def smem_stage(w, op: Op) -> None:
    buf = w.value(op.arg("buffer"))
    stage = w.value(op.arg("stage"))
    if not isinstance(buf, SmemBuffer) or stage is None:
        w.env[op.result] = None
        return
    w.env[op.result] = SmemView(buf, stage, (0,) * len(buf.shape), buf.shape, op.loc)


def smem_tile(w, op: Op) -> None:
    view = w.value(op.arg("view"))
    coords = [w.value(c) for c in op.args("coords")]
    box = tuple(op.attrs["box"])
    if not isinstance(view, SmemView) or any(c is None for c in coords):
        w.env[op.result] = None
        return
    offset = tuple(scalars.binary(w.ctx, "add", o, scalars.binary(w.ctx, "mul", c, b))
                   for o, c, b in zip(view.offset, coords, box))
    if w.phase == "check":
        for axis, (o, b, extent) in enumerate(zip(offset, box, view.shape)):
            o0 = view.offset[axis]
            # inside the view from its first row on: a coordinate below it (wg - 1 at
            # wg = 0) wraps round to a huge offset, whose end wraps back into the view
            fits = z3.ULE(bv(o) - bv(o0), extent - b) if b <= extent else z3.BoolVal(False)
            if holds(w.ctx, fits, w.path):
                continue
            model = report.find(w, z3.Not(fits), w.scope_vars())
            if model is None:
                continue
            start = value(model, o) - value(model, o0)
            start = start - (1 << 64) if start >= 1 << 63 else start    # below the view
            w.report(Finding(
                "tag.smem-view", "error",
                f"this tile of {view.buffer.name} covers {'rows' if axis == 0 else 'columns'} "
                f"{start}..{start + b - 1} of a view of {extent}: outside the shared-memory "
                f"tile", op.loc, "tile", "tile coordinates count boxes: keep "
                f"coords[{axis}] * {b} + {b} <= {extent}",
                report.counterexample(w, model, w.scope_vars(),
                                      warpgroup=w.role.warpgroup if w.role else None)))
            w.env[op.result] = None
            return
    w.env[op.result] = SmemView(view.buffer, view.stage, offset, box, view.stage_loc)


def frag_alloc(w, op: Op) -> None:
    t = op.result.type
    init = op.attrs.get("init")
    w.env[op.result] = Fragment(t.shape, t.layout, FragTag(
        "empty", reset_scope=w.scope_vars(), init=init if isinstance(init, (int, float)) else None,
        init_loc=op.loc), op.loc)
    if init is None:
        from . import uninit
        uninit.mark(w.env[op.result])


def frag_assign(w, op: Op) -> None:
    dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
    if not isinstance(dst, Fragment):
        return
    if isinstance(src, Fragment):
        dst.tag = src.tag.copy()
    else:
        dst.tag = FragTag("empty", reset_scope=w.scope_vars(),
                          init=src if isinstance(src, (int, float)) else None, init_loc=op.loc)


def frag_slice(w, op: Op) -> None:
    """tile(acc, (64, n), (0, j)): element (pr, pc) of the block is element (pr, pc + j*n)
    of the accumulator, so its tag is the accumulator's with pc shifted."""
    x, block = w.value(op.arg("x")), w.value(op.arg("block"))
    t = op.result.type
    if not isinstance(x, Fragment) or block is None or isinstance(block, float) or \
            scalars.is_pred(block):
        w.env[op.result] = Fragment(t.shape, t.layout, FragTag(
            "unknown", why_unknown="a column block of a value that is not modelled"), op.loc)
        return
    if x.tag.meaning is not None or x.tag.summed:
        w.not_modelled(op, "column blocks of softmax statistics or of summed fragments")
        w.env[op.result] = Fragment(t.shape, t.layout, FragTag(
            "unknown", why_unknown="a column block of softmax statistics or of a sum is not "
            "modelled"), op.loc)
        return
    pc = bv(w.pos["pc"])
    pair = (pc, pc + bv(scalars.binary(w.ctx, "mul", block, int(op.attrs["box"][1]))))

    def shift(term):
        if isinstance(term, z3.BoolRef):
            return z3.substitute(term, pair)
        return term if isinstance(term, (int, float)) else z3.substitute(bv(term), pair)

    tag = x.tag.copy()
    tag.fields = {k: shift(v) for k, v in tag.fields.items()}
    tag.contributions = [replace(c, k=tuple(shift(k) for k in c.k),
                                 valid=tuple(shift(v) for v in c.valid))
                         for c in tag.contributions]
    w.env[op.result] = Fragment(t.shape, t.layout, tag, op.loc)


def load(w, op: Op) -> None:
    src = w.value(op.arg("src"))
    t = op.result.type
    if isinstance(src, GlobalTile) and len(src.origin) in (1, 2):
        pos = (w.pos["pr"], w.pos["pc"])
        fields = {name: bv(scalars.binary(w.ctx, "add", o, p))
                  for name, o, p in zip(("row", "col"), src.origin, pos)}
        tag = FragTag("data", fields, src.tensor, reset_scope=w.scope_vars())
    else:
        w.not_modelled(op, "loads from shared memory")
        tag = FragTag("unknown", why_unknown="a load from shared memory is not modelled")
    w.env[op.result] = Fragment(t.shape, t.layout, tag, op.loc)


def same_tag(x: Fragment, t: FragmentType, loc) -> Fragment:
    return Fragment(t.shape, t.layout, x.tag.copy(), loc)


def cast(w, op: Op) -> None:
    x = w.value(op.arg("x"))
    t = op.result.type
    if isinstance(x, Fragment) and t.layout == x.layout:
        w.env[op.result] = same_tag(x, t, op.loc)
    else:
        w.env[op.result] = Fragment(t.shape, t.layout, FragTag("unknown", why_unknown=
                                    "a cast that changes the layout"), op.loc)


# The elementwise ops of the op table (those with NumPy semantics: add ... min, exp2, exp, log,
# ..., gelu) and select: each element's result is computed from the same element of its
# operands, so the tag transfer is the same for all of them (elementwise below).
ELEMENTWISE = tuple(s.opcode for s in OPS.values() if s.family == "math"
                    and s.semantics is not None) + ("math.select",)


def elementwise(w, op: Op) -> None:
    """Join of the operands' tags: kept when every fragment operand carries the same terms.
    A row vector broadcast along a tile's columns (x - row_sum(x)) joins when each of its
    fields (its row's: no col) is the tile's term at that element; the tile's tag is kept."""
    frags = [w.value(o) for o in op.operands if isinstance(w.value(o), Fragment)]
    t = op.result.type
    if not frags:
        w.env[op.result] = None
        return
    first = next((f for f in frags if len(f.shape) == len(t.shape)), frags[0])

    def agrees(f: Fragment) -> bool:
        if f.tag.state != first.tag.state:
            return False
        if len(f.shape) == len(first.shape):
            if f.layout != first.layout or f.tag.fields.keys() != first.tag.fields.keys():
                return False
        elif not (len(f.shape) == 1 and f.tag.fields.keys() <= first.tag.fields.keys() - {"col"}):
            return False
        return all(z3.simplify(bv(f.tag.fields[k]) == bv(first.tag.fields[k])).eq(
            z3.BoolVal(True)) for k in f.tag.fields)

    if first.tag.state != "unknown" and all(agrees(f) for f in frags if f is not first):
        w.env[op.result] = same_tag(first, t, op.loc)
    else:
        w.env[op.result] = Fragment(t.shape, t.layout, FragTag(
            "unknown", why_unknown=f"{op.opcode} joins fragments with different tags"), op.loc)


def tag_add(w, op: Op) -> None:
    x = w.value(op.arg("x"))
    names = op.attrs.get("names", ())
    if not isinstance(x, Fragment):
        w.env[op.result] = None
        return
    out = same_tag(x, op.result.type, op.loc)
    for name, v in zip(names, op.args("fields")):
        value = w.value(v)
        if value is None or isinstance(value, (Fragment, float)) or scalars.is_pred(value):
            out.tag.fields.pop(name, None)
            w.not_modelled(op, "tag fields that are not uniform scalars")
        else:
            out.tag.fields[name] = bv(value)
    w.env[op.result] = out
