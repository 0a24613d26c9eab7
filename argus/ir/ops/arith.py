"""Uniform scalar arithmetic: tile coordinates, stage and phase, sizes, predicates."""

from .spec import SCALAR, arg, op

BINARY = ("add", "sub", "mul", "floordiv", "mod", "min", "max", "and", "or", "xor", "shl",
          "shr", "eq", "ne", "lt", "le", "gt", "ge", "land", "lor")
UNARY = ("neg", "not")

SPECS = [op(f"arith.{name}", "arith", arg("lhs", *SCALAR), arg("rhs", *SCALAR), results=1)
         for name in BINARY]
SPECS += [op(f"arith.{name}", "arith", arg("x", *SCALAR), results=1) for name in UNARY]
