"""Elementwise math on fragments, row reductions, prefix sums, conversions, coordinates.

The elementwise ops are defined here once: each has its NumPy semantics (what the
interpreter computes, both modes, and what constant folding uses) and the C expression of
one element (the code generator fills it per register; the `argus::` functions it names are
the wrappers of argus/codegen/include/argus_math.cuh, each with its error bound there).

Semantics are the mathematical function rounded to fp32: the transcendental ones evaluate
in float64 and round once, so the interpreter holds the (nearly) correctly rounded value
and the device's wrappers are judged against it by their documented ulp bounds.
"""

import math

import numpy as np

from .spec import FRAG, SCALAR, arg, op


def _f64(fn):
    """fn evaluated in float64 on fp32 values (arrays or Python scalars), rounded to fp32."""
    def semantics(x):
        with np.errstate(all="ignore"):
            return np.asarray(fn(np.asarray(x, dtype=np.float64)), dtype=np.float32)
    semantics.__name__ = semantics.__qualname__ = fn.__name__
    semantics.__doc__ = fn.__doc__
    return semantics


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_GELU_K = 2.0 * math.sqrt(2.0 / math.pi)      # 2 sqrt(2/pi): gelu_tanh's 2u = K (x + c x^3)


def rsqrt(x):
    """1 / sqrt(x)."""
    return 1.0 / np.sqrt(x)


def erf(x):
    """The error function."""
    return _erf(x)


def sigmoid(x):
    """1 / (1 + e^-x)."""
    return 1.0 / (1.0 + np.exp(-x))


def silu(x):
    """x * sigmoid(x) = x / (1 + e^-x)."""
    return x / (1.0 + np.exp(-x))


def gelu(x):
    """x * Phi(x) = x/2 (1 + erf(x / sqrt 2)), as x/2 erfc(-x / sqrt 2) (no cancellation)."""
    return 0.5 * x * _erfc(-x * math.sqrt(0.5))


def gelu_tanh(x):
    """x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3); computed as x / (1 + e^-2u), the
    same function without the cancellation of 1 + tanh(u) for negative x."""
    return x / (1.0 + np.exp(-_GELU_K * (x + 0.044715 * x * x * x)))


# name: (NumPy semantics on fp32 values, the C expression of one element)
BINARY = {
    "add": (np.add, "({lhs}) + ({rhs})"),
    "sub": (np.subtract, "({lhs}) - ({rhs})"),
    "mul": (np.multiply, "({lhs}) * ({rhs})"),
    "div": (np.divide, "argus::div({lhs}, {rhs})"),
    "max": (np.maximum, "argus::max({lhs}, {rhs})"),
    "min": (np.minimum, "argus::min({lhs}, {rhs})"),
}
UNARY = {
    "exp2": (np.exp2, "argus::exp2({x})"),
    "neg": (np.negative, "-({x})"),
    "exp": (_f64(np.exp), "argus::exp({x})"),
    "log": (_f64(np.log), "argus::log({x})"),
    "log2": (_f64(np.log2), "argus::log2({x})"),
    "sqrt": (np.sqrt, "argus::sqrt({x})"),                 # IEEE: fp32 sqrt is exact-rounded
    "rsqrt": (_f64(rsqrt), "argus::rsqrt({x})"),
    "tanh": (_f64(np.tanh), "argus::tanh({x})"),
    "erf": (_f64(erf), "argus::erf({x})"),
    "abs": (np.abs, "argus::abs({x})"),
    "sigmoid": (_f64(sigmoid), "argus::sigmoid({x})"),
    "silu": (_f64(silu), "argus::silu({x})"),
    "gelu": (_f64(gelu), "argus::gelu({x})"),
    "gelu_tanh": (_f64(gelu_tanh), "argus::gelu_tanh({x})"),
}
# The ops with a second C expression on the FP32 units (no MUFU), which an op's attribute
# `poly_every = n` (n >= 1) takes for one register in n of each thread's fragment, the table's
# `cuda` template for the rest (exp2(x, poly_every=n) in the DSL; argus_math.cuh states the
# error bounds of both)
POLY = {"exp2": "argus::exp2_poly({x})"}
# The ops also defined on int32 operands: exact on integers (their C template is type-generic
# or has an int overload in argus_math.cuh); every other op takes floats (cast first).
INTEGER = frozenset({"add", "sub", "mul", "max", "min", "neg", "abs"})

# Row reductions, kind: (NumPy reduction over the last axis, the C combine of two partials
# (the in-thread fold and the quad shuffle both use it))
REDUCTIONS = {
    "max": (lambda x: np.max(x, axis=-1), "argus::max({lhs}, {rhs})"),
    "min": (lambda x: np.min(x, axis=-1), "argus::min({lhs}, {rhs})"),
    "sum": (lambda x: np.sum(x, axis=-1, dtype=np.asarray(x).dtype), "({lhs}) + ({rhs})"),
}

VAL = (*FRAG, *SCALAR)

SPECS = [op(f"math.{name}", "math", arg("lhs", *VAL), arg("rhs", *VAL), results=1,
            semantics=fn, cuda=c, integer=name in INTEGER) for name, (fn, c) in BINARY.items()]
SPECS += [op(f"math.{name}", "math", arg("x", *FRAG), results=1, semantics=fn, cuda=c,
             integer=name in INTEGER,
             doc="attrs: poly_every (optional, n >= 1: one register in n by POLY's expression)"
             if name in POLY else "") for name, (fn, c) in UNARY.items()]
SPECS += [
    op("math.cast", "math", arg("x", *FRAG), results=1, doc="attrs: dtype (rounds)"),
    op("math.select", "math", arg("cond", *FRAG), arg("a", *VAL), arg("b", *VAL), results=1),
    op("math.cmp", "math", arg("lhs", *VAL), arg("rhs", *VAL), results=1, doc="attrs: pred"),
    op("reduce.row", "math", arg("x", *FRAG), results=1,
       doc=f"attrs: kind ({'|'.join(REDUCTIONS)})"),
    op("scan.prefix_sum", "math", arg("x", *FRAG, "IndexVectorType"), results=1),
    op("frag.convert", "math", arg("x", *FRAG), results=1, doc="attrs: layout"),
    op("frag.coord", "math", arg("x", *FRAG), results=1,
       doc="the logical row (axis 0) or column (axis 1) each register of x holds"),
]


def define_unary(name: str, semantics, cuda: str, doc: str = "", integer: bool = False):
    """Add an elementwise unary op `math.<name>` to the table: the one definition every
    stage reads (the surface stub argus.lang makes for it, the frontend rule, the
    interpreter in both modes, the verifier's tag transfer and the CUDA lowering all come
    from it). The stages build their dispatch from the table when they are imported, so an
    op defined at run time must be defined before them (a plugin's first import)."""
    from . import OPS
    opcode = f"math.{name}"
    if opcode in OPS or not name.isidentifier():
        raise ValueError(f"cannot define {opcode!r}: "
                         + ("it exists" if opcode in OPS else "not an identifier"))
    if "{x}" not in cuda:
        raise ValueError(f"the C expression of {opcode} must use its operand {{x}}: {cuda!r}")
    spec = op(opcode, "math", arg("x", *FRAG), results=1, semantics=semantics, cuda=cuda,
              integer=integer, doc=doc)
    UNARY[name] = (semantics, cuda)
    SPECS.append(spec)
    OPS[opcode] = spec
    return spec
