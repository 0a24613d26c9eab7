"""Scans and device-side routing: exclusive prefix sums, entries of index vectors, counts
padded to whole tiles, and row segments of global tensors.

`prefix_sum` is exclusive (out[0] = 0, out[i] = x[0] + ... + x[i-1]), as argus.lang
documents: over per-expert counts it gives each expert's first row. Index vectors sum
exactly (int64); a 1-D fragment sums in fp32 in index order and is rounded to its dtype.
A segment is a view of the tensor's codes, so its writes land in the tensor.
"""

from __future__ import annotations

import numpy as np

from argus.ir.types import FragmentType

from ..errors import InterpretError
from ..machine import GlobalTensor
from ..values import round_to
from ._rule import pure, values


def _vector(op, x) -> np.ndarray:
    v = np.asarray(values(x))
    if v.ndim != 1:
        raise InterpretError(f"{op.loc}: {op.opcode} of a value of shape {v.shape}; it takes a "
                             f"1-D index vector or fragment")
    return v


def exclusive_sum(x: np.ndarray, result_type) -> np.ndarray:
    """The exclusive prefix sum of a 1-D array as a value of `result_type`."""
    if isinstance(result_type, FragmentType):
        out = np.zeros(x.shape, np.float32)
        out[1:] = np.cumsum(x[:-1].astype(np.float32), dtype=np.float32)
        return round_to(out, result_type.dtype)
    out = np.zeros(x.shape, np.int64)
    out[1:] = np.cumsum(x[:-1].astype(np.int64))
    return out


@pure
def _prefix_sum(agent, op, args):
    return exclusive_sum(_vector(op, op.arg("x", args)), op.result.type)


@pure
def _element(agent, op, args):
    v = _vector(op, op.arg("v", args))
    i = int(op.arg("i", args))
    if not 0 <= i < len(v):
        raise InterpretError(f"{op.loc}: element {i} of an index vector of {len(v)} entries; "
                             f"the index must be in 0..{len(v) - 1}")
    return int(v[i])


@pure
def _from_frag(agent, op, args):
    v = _vector(op, op.arg("x", args))
    if not np.all(v == np.round(v)):
        raise InterpretError(f"{op.loc}: to_indices of non-integer values; cast to int32 first")
    return v.astype(np.int64)


@pure
def _round_up(agent, op, args):
    v = _vector(op, op.arg("v", args)).astype(np.int64)
    m = int(op.attrs["multiple"])
    return -(-v // m) * m


@pure
def _segment(agent, op, args):
    tensor = op.arg("tensor", args)
    start, rows = int(op.arg("start", args)), int(op.arg("rows", args))
    if not isinstance(tensor, GlobalTensor):
        raise InterpretError(f"{op.loc}: segment of {type(tensor).__name__}, not a global tensor")
    extent = tensor.codes.shape[0]
    if start < 0 or rows < 0 or start + rows > extent:
        raise InterpretError(f"{op.loc}: segment rows [{start}, {start + rows}) of "
                             f"{tensor.name}, which has {extent} rows; the routing offsets "
                             f"and counts must stay within the tensor (do the counts add up "
                             f"to more rows than it has?)")
    view = GlobalTensor(f"{tensor.name}[{start}:{start + rows}]",
                        tensor.codes[start:start + rows], tensor.dtype)
    return view


RULES = {"scan.prefix_sum": _prefix_sum, "indices.element": _element,
         "indices.from_frag": _from_frag,
         "indices.round_up": _round_up, "segment": _segment}
