"""Elementwise math, reductions, scans, layout conversion, coordinate intrinsics.
Python operators + - * / on fragments are elementwise add, sub, mul, div."""

from ._stub import surface


@surface
def maximum(a, b):
    """Elementwise max."""


@surface
def minimum(a, b):
    """Elementwise min."""


@surface
def exp2(x):
    """Elementwise 2**x."""


@surface
def cast(x, dtype):
    """Convert to dtype with round-to-nearest-even."""


@surface
def select(cond, a, b):
    """cond ? a : b elementwise; cond is a comparison of fragments or coordinates."""


@surface
def row_max(x):
    """Max over each row of a 2-D fragment (across the threads that share the row)."""


@surface
def row_sum(x):
    """Sum over each row of a 2-D fragment."""


@surface
def prefix_sum(x):
    """Exclusive prefix sum of an index vector or a 1-D fragment."""


@surface
def convert_layout(x, layout):
    """The same logical tile in another register layout (e.g. accumulator -> wgmma A)."""


@surface
def row_of(x):
    """The logical row each register of fragment x holds (int32 fragment, for masks)."""


@surface
def col_of(x):
    """The logical column each register of fragment x holds."""
