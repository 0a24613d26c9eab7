"""Elementwise math on fragments, row reductions, prefix sums, conversions, coordinates."""

import numpy as np

from .spec import FRAG, SCALAR, arg, op

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
}
VAL = (*FRAG, *SCALAR)

SPECS = [op(f"math.{name}", "math", arg("lhs", *VAL), arg("rhs", *VAL), results=1,
            semantics=fn, cuda=c) for name, (fn, c) in BINARY.items()]
SPECS += [op(f"math.{name}", "math", arg("x", *FRAG), results=1, semantics=fn, cuda=c)
          for name, (fn, c) in UNARY.items()]
SPECS += [
    op("math.cast", "math", arg("x", *FRAG), results=1, doc="attrs: dtype (rounds)"),
    op("math.select", "math", arg("cond", *FRAG), arg("a", *VAL), arg("b", *VAL), results=1),
    op("math.cmp", "math", arg("lhs", *VAL), arg("rhs", *VAL), results=1, doc="attrs: pred"),
    op("reduce.row", "math", arg("x", *FRAG), results=1, doc="attrs: kind (max|sum)"),
    op("scan.prefix_sum", "math", arg("x", *FRAG, "IndexVectorType"), results=1),
    op("frag.convert", "math", arg("x", *FRAG), results=1, doc="attrs: layout"),
    op("frag.coord", "math", arg("x", *FRAG), results=1,
       doc="the logical row (axis 0) or column (axis 1) each register of x holds"),
]
