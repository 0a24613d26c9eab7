"""`@kernel(..., block_order="reversed")`: the hardware launches the blocks with the last ids
first. Every stage reads the one launch field: the frontend checks it (a value it knows, no
cluster), the IR prints and reads it back, the code generator counts every block id (and a
schedule's linear block) from the last block; the verifier and the interpreter see the same
set of blocks, so they need nothing."""

from __future__ import annotations

import pytest

from argus.codegen import generate
from argus.frontend import DSLError, parse_source
from argus.ir.printer import format_kernel
from argus.ir.reader import read_kernel

SRC = '''from argus.lang import *

ORDER = "reversed"
LAST_FIRST = 1


@kernel(grid=("M // 64", "N // 64"), block=128, block_order=ORDER)
def blocks(A: Tensor["M", "N", "fp32"], C: Tensor["M", "N", "fp32"]):
    a = load(tile(A, (64, 64), (block_id("x"), block_id("y"))), layout="wgmma_acc_m64n64")
    store(tile(C, (64, 64), (block_id("x"), block_id("y"))), a)


@kernel(grid=(132, 2), block=128, block_order="reversed" if LAST_FIRST else "forward")
def walk(A: Tensor["M", "N", "fp32"], C: Tensor["M", "N", "fp32"]):
    for i, m, n in schedule(M // 64, N // 64):
        a = load(tile(A, (64, 64), (m, n)), layout="wgmma_acc_m64n64")
        store(tile(C, (64, 64), (m, n)), a)
'''


def _kernels(**constants):
    return parse_source(SRC, "order.py", overrides=constants or None)


def test_a_reversed_grid_counts_every_block_id_from_the_last_block():
    gen = generate(_kernels()["blocks"]).source
    assert "(int)(gridDim.x - 1u - blockIdx.x)" in gen
    assert "(int)(gridDim.y - 1u - blockIdx.y)" in gen
    forward = generate(_kernels(ORDER="forward")["blocks"]).source
    assert "gridDim.x - 1u" not in forward and "(int)blockIdx.x" in forward


def test_a_schedule_walks_from_the_reversed_linear_block():
    """The persistent walk's first tile is the block's linear id, reversed on every axis."""
    gen = generate(_kernels()["walk"]).source
    assert "(int)(gridDim.x - 1u - blockIdx.x) + (int)gridDim.x * " \
           "((int)(gridDim.y - 1u - blockIdx.y)" in gen
    forward = generate(_kernels(LAST_FIRST=0)["walk"]).source
    assert "gridDim.x - 1u" not in forward


def test_the_ir_text_keeps_the_block_order():
    k = _kernels()["blocks"]
    assert k.launch.block_order == "reversed"
    text = format_kernel(k)
    launch = next(line for line in text.splitlines() if "launch grid" in line)
    assert launch.endswith("block_order=reversed")
    assert read_kernel(text).launch.block_order == "reversed"
    forward = _kernels(ORDER="forward")["blocks"]
    assert "block_order" not in format_kernel(forward)
    assert read_kernel(format_kernel(forward)).launch.block_order == "forward"


@pytest.mark.parametrize("value, says", [
    ('"backwards"', "is not one of ('forward', 'reversed')"),
    ("1", "is not one of ('forward', 'reversed')"),
])
def test_an_unknown_order_is_refused_at_its_line(value, says):
    src = SRC.replace("block_order=ORDER", f"block_order={value}")
    with pytest.raises(DSLError) as err:
        _kernels_of(src)
    assert says in str(err.value) and "order.py:7:" in str(err.value)


def test_a_reversed_cluster_launch_is_refused():
    src = SRC.replace("block=128, block_order=ORDER", "block=128, cluster=(2, 1, 1), "
                      "block_order=ORDER")
    with pytest.raises(DSLError) as err:
        _kernels_of(src)
    assert "cluster_rank()" in str(err.value) and "order.py:7:" in str(err.value)


def test_a_conditional_expression_needs_a_compile_time_condition():
    src = SRC.replace('a = load(tile(A, (64, 64), (block_id("x"), block_id("y"))), '
                      'layout="wgmma_acc_m64n64")',
                      'r = block_id("x") if block_id("y") else 0')
    with pytest.raises(DSLError) as err:
        _kernels_of(src)
    assert "needs c known at compile time" in str(err.value)
    assert "select(cond, a, b)" in str(err.value)


def _kernels_of(src):
    return parse_source(src, "order.py")
