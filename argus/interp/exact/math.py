"""Exact-mode math: every op works register by register, thread by thread.

Operands are brought to the result's layout without moving data between threads: a
fragment of the same layout is used as is; a row vector (rows(L)) is read from the
register of the same thread that holds that row (NaN if the thread holds none); a
scalar is broadcast. Two 2-D fragments of different layouts cannot be combined register
by register: that is an error naming the op. Row reductions combine the threads that
share a row (the quad shuffle) and leave the result in every thread holding that row;
convert_layout renames registers within each thread where every thread already holds
what it needs, and otherwise exchanges the values through the warpgroup (as the backend
does, through shared memory): each result register reads its element from the thread
that holds it; an element no thread of the source holds reads NaN.
"""

from __future__ import annotations


import numpy as np

from argus.ir.types import FragmentType

from ..errors import InterpretError
from ..machine import RegisterFragment
from ..ops.math import _BINARY, _CMP, _UNARY, reduce_rows
from ..ops._rule import pure
from ..values import round_to
from .fraglayout import layout_of
from .regs import Regs


def _layout_and_data(x):
    if isinstance(x, Regs):
        return x.layout, x.data
    if isinstance(x, RegisterFragment) and x.layout is not None:
        return x.layout, x.read()
    return None, None


def operand_regs(op, x, out):
    """x as a [thread, register] array (or scalar) of layout `out`."""
    layout, data = _layout_and_data(x)
    if layout is None:
        if isinstance(x, np.ndarray) and x.ndim:
            arr = np.asarray(x, dtype=np.float32)
            if arr.ndim == 1 and len(out.shape) == 2:
                arr = arr[:, None]
            return out.from_logical(arr)
        return np.float32(x)
    data = np.asarray(data, dtype=np.float32)
    if layout.same_as(out):
        return data
    if len(layout.shape) == 1 and len(out.shape) == 2 and layout.shape[0] == out.shape[0]:
        slots = out.row_slots(layout)
        got = np.take_along_axis(data, np.maximum(slots, 0), axis=1) if data.shape[0] == \
            slots.shape[0] else np.full(slots.shape, np.nan, np.float32)
        return np.where(slots >= 0, got, np.float32(np.nan))
    raise InterpretError(f"{op.loc}: {op.opcode} combines a fragment of layout "
                         f"{layout.name} {layout.shape} with one of layout {out.name} "
                         f"{out.shape}; registers are combined thread by thread, so "
                         f"convert_layout one side to the other's layout first")


def _result(op, data):
    t = op.result.type
    out = layout_of(t)
    data = np.broadcast_to(np.asarray(data, dtype=np.float32), (out.threads, out.values))
    return Regs(out, round_to(data, t.dtype))


def _binary(fn):
    @pure
    def rule(agent, op, args):
        if not isinstance(op.result.type, FragmentType):
            return fn(*args)
        out = layout_of(op.result.type)
        with np.errstate(all="ignore"):
            return _result(op, fn(operand_regs(op, op.arg("lhs", args), out), operand_regs(op, op.arg("rhs", args), out)))
    return rule


def _unary(fn):
    @pure
    def rule(agent, op, args):
        out = layout_of(op.result.type)
        with np.errstate(all="ignore"):
            return _result(op, fn(operand_regs(op, op.arg("x", args), out)))
    return rule


@pure
def _cast(agent, op, args):
    return _result(op, operand_regs(op, op.arg("x", args), layout_of(op.result.type)))


@pure
def _select(agent, op, args):
    out = layout_of(op.result.type)
    cond, a, b = (operand_regs(op, x, out) for x in args)
    return _result(op, np.where(np.asarray(cond, dtype=bool), a, b))


@pure
def _cmp(agent, op, args):
    pred = op.attrs["pred"]
    if pred not in _CMP:
        raise ValueError(f"unknown comparison {pred!r}; one of {sorted(_CMP)}")
    if not isinstance(op.result.type, FragmentType):
        return _CMP[pred](*args)
    out = layout_of(op.result.type)
    res = _CMP[pred](operand_regs(op, op.arg("lhs", args), out), operand_regs(op, op.arg("rhs", args), out))
    return Regs(out, np.broadcast_to(res, (out.threads, out.values)).astype(np.float32))


@pure
def _reduce_row(agent, op, args):
    src_layout, data = _layout_and_data(op.arg("x", args))
    r = reduce_rows(op, src_layout.to_logical(data))
    out = layout_of(op.result.type)
    return Regs(out, round_to(out.from_logical(r), op.result.type.dtype))


@pure
def _convert(agent, op, args):
    src_layout, data = _layout_and_data(op.arg("x", args))
    out = layout_of(op.result.type)
    slots = out.thread_slots(src_layout)
    if data.shape[0] == slots.shape[0] and np.all(slots >= 0):     # registers renamed
        return Regs(out, np.take_along_axis(np.asarray(data, np.float32), slots, axis=1))
    # an exchange across the warpgroup's threads (codegen: through shared memory)
    return Regs(out, out.from_logical(src_layout.to_logical(data)))


@pure
def _coord(agent, op, args):
    out = layout_of(op.result.type)
    axis = int(op.attrs["axis"])
    table = out.rows if axis == 0 else out.cols
    return Regs(out, table.astype(np.float32))


RULES = {f"math.{n}": _binary(f) for n, f in _BINARY.items()}
RULES.update({f"math.{n}": _unary(f) for n, f in _UNARY.items()})
RULES.update({"math.cast": _cast, "math.select": _select, "math.cmp": _cmp,
              "reduce.row": _reduce_row, "frag.convert": _convert, "frag.coord": _coord})
