"""Elementwise math on fragments, row reductions, prefix sums, conversions, coordinates."""

from .spec import FRAG, SCALAR, arg, op

BINARY = ("add", "sub", "mul", "div", "max", "min")
UNARY = ("exp2", "neg")
VAL = (*FRAG, *SCALAR)

SPECS = [op(f"math.{name}", "math", arg("lhs", *VAL), arg("rhs", *VAL), results=1)
         for name in BINARY]
SPECS += [op(f"math.{name}", "math", arg("x", *FRAG), results=1) for name in UNARY]
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
