"""Elementwise math, casts, selects, compares, row reductions and coordinate intrinsics on
fragments, computed in fp32 and rounded to the result's dtype (as registers hold it)."""

from __future__ import annotations

import operator

import numpy as np

from argus.ir.types import FragmentType

from ..values import round_to
from ._rule import pure, values

from argus.ir.ops.math import BINARY, REDUCTIONS, UNARY

# the op table's semantics, one definition for every stage
_BINARY = {name: fn for name, (fn, _) in BINARY.items()}
_UNARY = {name: fn for name, (fn, _) in UNARY.items()}
_REDUCE = {kind: fn for kind, (fn, _) in REDUCTIONS.items()}
_CMP = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
        "eq": operator.eq, "ne": operator.ne}


def _result(op, data):
    t = op.result.type
    if isinstance(t, FragmentType):
        data = np.broadcast_to(np.asarray(data, dtype=np.float32), t.shape)
        return round_to(data, t.dtype)
    return data


def _f32(x):
    v = values(x)
    return np.asarray(v, dtype=np.float32) if isinstance(v, np.ndarray) else np.float32(v)


def _rows(*xs):
    """Operands aligned for broadcasting: a per-row vector (R,) against a tile (R, C)
    applies to each row (not, as NumPy would, to each column)."""
    ndim = max(np.ndim(x) for x in xs)
    return [x.reshape(x.shape + (1,) * (ndim - x.ndim)) if isinstance(x, np.ndarray)
            and 0 < x.ndim < ndim else x for x in xs]


def _binary(fn):
    @pure
    def rule(agent, op, args):
        with np.errstate(all="ignore"):
            return _result(op, fn(*_rows(_f32(op.arg("lhs", args)), _f32(op.arg("rhs", args)))))
    return rule


def _unary(fn):
    @pure
    def rule(agent, op, args):
        with np.errstate(all="ignore"):
            return _result(op, fn(_f32(op.arg("x", args))))
    return rule


@pure
def _cast(agent, op, args):
    return _result(op, _f32(op.arg("x", args)))


@pure
def _select(agent, op, args):
    cond, a, b = _rows(*(_f32(x) for x in args))
    return _result(op, np.where(np.asarray(cond, dtype=bool), a, b))


@pure
def _cmp(agent, op, args):
    pred = op.attrs["pred"]
    if pred not in _CMP:
        raise ValueError(f"unknown comparison {pred!r}; one of {sorted(_CMP)}")
    out = _CMP[pred](*_rows(_f32(op.arg("lhs", args)), _f32(op.arg("rhs", args))))
    t = op.result.type
    return np.broadcast_to(out, t.shape).astype(np.float32) if isinstance(t, FragmentType) else out


@pure
def _reduce_row(agent, op, args):
    r = reduce_rows(op, _f32(op.arg("x", args)))
    t = op.result.type
    return _result(op, r.reshape(t.shape) if isinstance(t, FragmentType) else r)


def reduce_rows(op, x):
    """The row reduction `op` (its attrs' kind, from the op table) of a logical tile."""
    kind = op.attrs["kind"]
    if kind not in _REDUCE:
        raise ValueError(f"unknown row reduction {kind!r}; one of {sorted(_REDUCE)}")
    return _REDUCE[kind](x)


@pure
def _convert(agent, op, args):
    # value mode: a layout conversion keeps every logical element where it is
    return _result(op, _f32(op.arg("x", args)))


@pure
def _coord(agent, op, args):
    shape = np.shape(values(op.arg("x", args)))
    axis = int(op.attrs["axis"])
    return _result(op, np.indices(shape)[axis].astype(np.float32))


RULES = {f"math.{n}": _binary(f) for n, f in _BINARY.items()}
RULES.update({f"math.{n}": _unary(f) for n, f in _UNARY.items()})
RULES.update({"math.cast": _cast, "math.select": _select, "math.cmp": _cmp,
              "reduce.row": _reduce_row, "frag.convert": _convert, "frag.coord": _coord})
