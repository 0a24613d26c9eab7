"""A helper parameter given an expression (`step(j - nf)`) and bound again inside a nested
helper (`g = j`) stays defined: binding names the anonymous result of the expression just
emitted, never a value some other name already holds (it left `j` naming a value no op
defined: an ill-formed IR error instead of a kernel)."""

from argus.frontend import parse_source
from argus.ir.printer import format_kernel

SRC = '''from argus.lang import *


@helper
def alias(j):
    g = j
    return g


@helper
def step(x_s, j):
    g = alias(j)
    store(tile(x_s, (16,), (g,)), fragment(fp32, (16,), "blocked", init=0.0))
    store(tile(x_s, (16,), (j,)), fragment(fp32, (16,), "blocked", init=1.0))


@kernel(grid=(1,), block=128)
def k(X: Tensor[64, fp32]):
    nf = 1
    for j in range(2, 4):
        step(X, j - nf)
'''


def test_an_expression_argument_rebound_in_a_nested_helper_stays_defined():
    kernel = parse_source(SRC, "rebound.py")["k"]       # raised IRError (def-before-use)
    text = format_kernel(kernel)
    assert "arith.sub" in text or "arith.add" in text
