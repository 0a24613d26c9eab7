"""A fragment read before anything is written into it.

`fragment(dtype, shape, layout)` without `init=` holds whatever the registers held: the
interpreter and the GPU both give garbage. The walker follows program order, so at every
op the fragments it reads (operands the op table lists as read, or not as written) whose
tag is still "empty" with no initial value were never written on this path: an
accumulator whose reset was left out (`init=0.0` dropped) or whose first assignment was
dropped. One error per fragment, at the read, naming where it was made. wgmma's
accumulator has its own check (tag.accumulator-init, wgmma.py)."""

from __future__ import annotations

from argus.ir.nodes import Op, Value
from argus.ir.ops import OPS
from argus.verify.finding import Finding

from .values import Fragment

OWN_CHECK = {("wgmma.mma", "acc"), ("wgmma.mma_rs", "acc")}
SHAPE_ONLY = {"frag.coord"}        # reads the layout (row_of, col_of), not the values


def reads(w, op: Op):
    """(operand name, fragment) for the fragments op reads."""
    spec = OPS.get(op.opcode)
    if op.opcode in SHAPE_ONLY:
        return
    if spec is None:               # arith.* and other untabled ops read every operand
        for o in op.operands:
            v = w.env.get(o) if isinstance(o, Value) else None
            if isinstance(v, Fragment):
                yield "", v
        return
    for operand in spec.operands:
        if (operand.name in spec.writes and operand.name not in spec.reads) or \
                (op.opcode, operand.name) in OWN_CHECK or operand.variadic:
            continue
        try:
            o = op.arg(operand.name)
        except (IndexError, KeyError, LookupError):
            continue
        v = w.env.get(o) if isinstance(o, Value) else None
        if isinstance(v, Fragment):
            yield operand.name, v


def mark(frag: Fragment) -> None:
    """frag.alloc without init=: nothing written yet."""
    frag.unwritten = True


def check(w, op: Op) -> None:
    """Report the unwritten fragments op reads, then clear the ones it writes."""
    if w.phase == "check":
        _report(w, op)
    spec = OPS.get(op.opcode)
    for name in (spec.writes if spec is not None else ()):
        try:
            o = op.arg(name)
        except (IndexError, KeyError, LookupError):
            continue
        v = w.env.get(o) if isinstance(o, Value) else None
        if isinstance(v, Fragment):
            v.unwritten = False


def _report(w, op: Op) -> None:
    for _, frag in reads(w, op):
        t = frag.tag
        if not getattr(frag, "unwritten", False):
            continue
        done = w.__dict__.setdefault("_uninit_reported", set())
        key = (t.init_loc.line, t.init_loc.col) if t.init_loc else id(frag)
        if key in done:
            continue
        done.add(key)
        made = f" (made at line {t.init_loc.line} without init=)" if t.init_loc else ""
        w.findings.append(Finding(
            "tag.uninitialised", "error",
            f"this {op.opcode.split('.')[-1]} reads a fragment{made} that nothing has "
            f"written yet: its registers hold garbage", op.loc, op.opcode,
            "give the fragment its first value before this read: fragment(..., init=0.0) "
            "for an accumulator, or assign(x, ...) first"))
