"""The C addressing of every fragment layout (argus.codegen.registers) evaluates, for every
thread and register, to the element the layout's table (argus.layout.fragments, the
interpreter's definition) puts there: the GPU and the interpreter agree by construction
only if these expressions are right."""

import re

import numpy as np
import pytest

from argus.codegen.registers import LANE, register_layout
from argus.layout.hopper import ACCUMULATOR_NS

LAYOUTS = ([(f"wgmma_acc_m64n{n}", (64, n)) for n in ACCUMULATOR_NS[::4]]
           + [("wgmma_acc_m64n64", (64, 128)), ("wgmma_acc_m64n64", (128, 64)),
              ("wgmma_a_rs_16bit", (64, 16)), ("wgmma_a_rs_16bit", (64, 64)),
              ("ldmatrix_x4", (32, 8)), ("stmatrix_x2_trans", (16, 8)), ("ldmatrix_x1", (8, 8)),
              ("blocked", (64, 64)), ("blocked", (64, 8)), ("blocked", (96, 24)),
              ("blocked", (100, 12)), ("blocked", (300,)), ("blocked", (1024,)),
              ("rows(wgmma_acc_m64n64)", (64,)), ("rows(blocked)", (64,))])


def _py(expr: str) -> str:
    """The C expression as Python (its operands are non-negative: / and % agree)."""
    expr = re.sub(r"argus::table<([^>]*)>\(", r"([\1]).__getitem__(", expr)
    return expr.replace("/", "//")


@pytest.mark.parametrize("name, shape", LAYOUTS, ids=[f"{n}-{s}" for n, s in LAYOUTS])
def test_coordinates_evaluate_to_the_table(name, shape):
    layout = register_layout(name, shape)
    table = layout.table
    for axis in range(len(shape)):
        code = compile(_py(layout.coord(axis, "v")), "<coord>", "eval")
        want = table.rows if axis == 0 else table.cols
        got = np.array([[eval(code, {LANE: t, "v": v}) for v in range(table.values)]
                        for t in range(table.threads)])
        assert np.array_equal(got, want), (axis, layout.coord(axis, "v"))


def test_an_unknown_layout_is_a_codegen_error():
    from argus.codegen.errors import CodegenError
    with pytest.raises(CodegenError, match="nonsense"):
        register_layout("nonsense", (64, 64))
