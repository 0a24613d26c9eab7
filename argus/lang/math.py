"""Elementwise math, reductions, scans, layout conversion, coordinate intrinsics.
Python operators + - * / on fragments are elementwise add, sub, mul, div."""

import builtins

from ._stub import surface


@surface
def maximum(a, b):
    """Elementwise max."""


@surface
def minimum(a, b):
    """Elementwise min."""


@surface
def exp2(x, poly_every=0):
    """Elementwise 2**x. On the GPU each value is MUFU.EX2's (ex2.approx: 16 results a clock
    an SM, at most 2.06 ulp); `poly_every=n` (a compile-time int, n >= 1) computes one
    register in n of each thread's fragment on the FP32 units instead (a degree-5
    polynomial, twelve instructions, at most 2.73 ulp; argus_math.cuh's exp2_poly), for a
    loop bound by the exponentials, such as attention's softmax at head dim 64. The value is
    the same function either way: the interpreter and the verifier do not distinguish."""


@surface
def exp(x):
    """Elementwise e**x."""


@surface
def log(x):
    """Elementwise natural logarithm (NaN below 0, -inf at 0)."""


@surface
def log2(x):
    """Elementwise base-2 logarithm."""


@surface
def sqrt(x):
    """Elementwise square root (IEEE, correctly rounded)."""


@surface
def rsqrt(x):
    """Elementwise 1 / sqrt(x)."""


@surface
def tanh(x):
    """Elementwise hyperbolic tangent."""


@surface
def erf(x):
    """Elementwise error function."""


@surface(builtin=builtins.abs)
def abs(x):
    """Elementwise |x| (float or int32 fragments). Called from Python outside a kernel it is
    Python's abs, so that `from argus.lang import *` leaves host code's abs() working."""


@surface
def sigmoid(x):
    """Elementwise 1 / (1 + e**-x)."""


@surface
def silu(x):
    """Elementwise x * sigmoid(x) (SiLU, swish)."""


@surface
def gelu(x, approximate="none"):
    """Elementwise GELU, x * Phi(x) = x/2 (1 + erf(x / sqrt 2)); approximate="tanh" is the
    tanh form x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3))) (as torch's gelu)."""


@surface
def cast(x, dtype):
    """Convert to dtype with round-to-nearest-even."""


@surface
def select(cond, a, b):
    """cond ? a : b elementwise; cond is a comparison of fragments or coordinates."""


@surface
def row_max(x):
    """Max over each row of a 2-D fragment of any layout (across the threads that share the
    row); the result is a row vector of layout rows(<x's layout>)."""


@surface
def row_sum(x):
    """Sum over each row of a 2-D fragment."""


@surface
def row_min(x):
    """Min over each row of a 2-D fragment."""


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


def _table_stubs() -> dict:
    """A surface stub for each unary op of the op table that has no hand-written one above
    (an op added with argus.ir.ops.math.define_unary): its doc comes from the table."""
    from argus.ir.ops import OPS
    from argus.ir.ops.math import UNARY
    made = {}
    for name in UNARY:
        if name in globals() or name in ("neg", "gelu_tanh"):
            continue

        def stub(x):
            pass
        stub.__name__ = stub.__qualname__ = name
        stub.__module__ = __name__
        stub.__doc__ = OPS[f"math.{name}"].doc or f"Elementwise {name} (from the op table)."
        made[name] = surface(stub)
    return made


TABLE_STUBS = _table_stubs()
globals().update(TABLE_STUBS)
