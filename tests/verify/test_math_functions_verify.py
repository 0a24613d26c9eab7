"""The tag pass on the math functions: each elementwise op of the op table keeps the tags of
its element (the copy kernel of examples/copy.py with y = silu(x), ... stored verifies with no
finding, in a plain and an accumulator layout), row_min / row_sum / row_max of any layout
broadcast back over their tile keep the tile's tags, and a wrong store or a row vector of
another tile is still caught (an error, or at least a finding: never a silent pass)."""

import pytest

from argus.frontend.parse import parse_source
from argus.ir.ops.math import UNARY
from argus.verify import verify

COPY = '''from argus.lang import *

@kernel(grid=("M // BM", "N // BN"), block=128)
def k(X: Tensor["M", "N", fp32], Y: Tensor["M", "N", fp32], BM: const = 64, BN: const = 64):
    assume(M % BM == 0)
    assume(N % BN == 0)
    tm = block_id("x")
    tn = block_id("y")
    src = tile(X, (BM, BN), (tm, tn))
    dst = tile(Y, (BM, BN), DST)
    x = load(src, "LAYOUT")
    y = EXPR
    tag_assert(tag(y).row == coord(dst)[0] and tag(y).col == coord(dst)[1])
    store(dst, y)
'''
CALLS = {"exp": "exp(x)", "log": "log(x)", "log2": "log2(x)", "sqrt": "sqrt(x)",
         "rsqrt": "rsqrt(x)", "tanh": "tanh(x)", "erf": "erf(x)", "abs": "abs(x)",
         "sigmoid": "sigmoid(x)", "silu": "silu(x)", "gelu": "gelu(x)",
         "gelu_tanh": 'gelu(x, approximate="tanh")', "exp2": "exp2(x)", "neg": "-x"}
LAYOUTS = ["blocked", "wgmma_acc_m64n64"]


def kernel(expr: str, layout: str, dst: str = "(tm, tn)"):
    src = COPY.replace("EXPR", expr).replace("LAYOUT", layout).replace("DST", dst)
    return parse_source(src, "math_copy.py")["k"]


def test_every_unary_op_is_exercised():
    assert set(CALLS) == set(UNARY)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", sorted(CALLS))
def test_each_function_keeps_the_tags_of_its_element(op, layout):
    assert verify(kernel(CALLS[op], layout)) == []


@pytest.mark.parametrize("layout", [*LAYOUTS, "wgmma_acc_m64n32", "wgmma_a_rs_16bit",
                                    "ldmatrix_x4"])
@pytest.mark.parametrize("expr", [
    "gelu(silu(x), approximate=\"tanh\") + tanh(abs(x)) * sigmoid(x) - erf(x) + rsqrt(exp(x))",
    "x - row_min(x)",
    "x + log(row_sum(exp(x)))",
    "exp(x - row_max(x)) / row_sum(exp(x - row_max(x)))",
    "maximum(x, row_min(x) * 0.5)",
])
def test_chains_and_row_reductions_broadcast_back(expr, layout):
    assert verify(kernel(expr, layout)) == []


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_store_to_the_wrong_tile_is_an_error(layout):
    findings = verify(kernel("silu(x)", layout, dst="(tn, tm)"))
    assert any(f.severity == "error" for f in findings), findings


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_row_vector_of_another_tile_is_not_a_silent_pass(layout):
    src = COPY.replace("EXPR", "x - row_min(x2)").replace("LAYOUT", layout).replace(
        "DST", "(tm, tn)").replace(
        "    y = ", "    x2 = load(tile(X, (BM, BN), (tm + 1, tn)), \"LAYOUT\")\n    y = ".replace(
            "LAYOUT", layout))
    findings = verify(parse_source(src, "math_copy.py")["k"])
    assert findings, "a row vector of rows tm + 1 broadcast over tile tm must not verify"
