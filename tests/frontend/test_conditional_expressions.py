"""`a if c else b` with c known at compile time: the branch c picks, in a kernel body and in
a launch field (a grid dimension, block_order); a runtime c is refused at its line."""

from argus.frontend import DSLError, parse_source
from argus.ir import format_kernel

import pytest

SRC = '''from argus.lang import *

WIDE = {wide}


@kernel(grid=("M // 128" if WIDE else "M // 64", 2 if WIDE else 1), block=128)
def k(A: Tensor["M", 64, "fp32"], C: Tensor["M", 64, "fp32"]):
    rows = 128 if WIDE else 64
    a = load(tile(A, (64, 64), (block_id("x") * (rows // 64), 0)), layout="wgmma_acc_m64n64")
    store(tile(C, (64, 64), (block_id("x") * (rows // 64), 0)), a)
'''


@pytest.mark.parametrize("wide, grid", [(1, ("M // 128", "2")), (0, ("M // 64", "1"))])
def test_the_branch_a_constant_picks_is_taken(wide, grid):
    k = parse_source(SRC.format(wide=wide), "cond.py")["k"]
    assert k.launch.grid == grid
    text = format_kernel(k)
    assert f"arith.mul %0, {2 if wide else 1} : index" in text


def test_the_other_branch_is_not_evaluated():
    """An undefined name in the branch not taken is never looked up (as in an `if`)."""
    src = SRC.format(wide=1).replace('rows = 128 if WIDE else 64',
                                     'rows = 128 if WIDE else UNDEFINED')
    assert parse_source(src, "cond.py")["k"]


def test_a_runtime_condition_is_refused_at_its_line():
    src = SRC.format(wide=1).replace('rows = 128 if WIDE else 64',
                                     'rows = 128 if block_id("y") else 64')
    with pytest.raises(DSLError) as err:
        parse_source(src, "cond.py")
    assert "cond.py:8:" in str(err.value) and "select(cond, a, b)" in str(err.value)
