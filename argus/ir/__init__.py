"""The typed Argus IR: types, op nodes, the op table, the printer and the checker."""

from .check import IRError, Problem, check_kernel, problems
from .nodes import Block, Kernel, Launch, Loc, Op, Role, Schedule, Value, walk
from .ops import OPS, OpSpec, spec_of
from .printer import format_kernel, format_op
from .reader import IRSyntaxError, read_kernel
from .types import DType

__all__ = ["Block", "DType", "IRError", "IRSyntaxError", "Kernel", "Launch", "Loc", "OPS", "Op", "OpSpec", "Problem",
           "Role", "Schedule", "Value", "check_kernel", "format_kernel", "format_op", "problems",
           "read_kernel", "spec_of", "walk"]
