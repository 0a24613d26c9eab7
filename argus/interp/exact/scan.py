"""Exact-mode prefix sums of 1-D fragments: the scan reads the logical vector from the
registers that hold it and deals the result out through the result's layout (on the GPU,
a shuffle scan across the threads, which the compiler derives). Index vectors are uniform
and need no override."""

from __future__ import annotations

from argus.ir.types import FragmentType

from ..ops.scan import RULES as VALUE_RULES
from ..ops.scan import exclusive_sum
from .fraglayout import layout_of
from .math import _layout_and_data
from .regs import Regs


def _prefix_sum(agent, op, args):
    layout, data = _layout_and_data(op.arg("x", args))
    if layout is None or not isinstance(op.result.type, FragmentType):
        return (yield from VALUE_RULES["scan.prefix_sum"](agent, op, args))
    out = layout_of(op.result.type)
    return Regs(out, out.from_logical(exclusive_sum(layout.to_logical(data), op.result.type)))


RULES = {"scan.prefix_sum": _prefix_sum}
