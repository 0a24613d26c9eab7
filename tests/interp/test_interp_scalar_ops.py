"""Scalar arithmetic and predicates (the arith family) and the fragment min/neg, each
checked against Python on every block: the kernel stores what it computed."""

import numpy as np
import pytest

from argus.interp.evaluator import interpret
from argus.interp.ops import RULES

from interp_kernels import compile_kernel

SCALARS = '''
@kernel(grid=(4,), block=128)
def k(Y: Tensor[256, 64, fp32], Z: Tensor[256, 64, fp32], W: Tensor[256, 64, fp32]):
    bx = block_id("x")
    zero = fragment(fp32, (64, 64), "blocked", init=0.0)
    v = minimum(bx, 2) * 1000 + maximum(bx, 1) * 100 + (bx >> 1) * 10 + (bx | 4) + -bx
    store(tile(Y, (64, 64), (bx, 0)), zero + v)
    if (bx >= 1 and bx <= 2) or not (bx != 3):
        store(tile(Z, (64, 64), (bx, 0)), zero + 1.0)
    else:
        if bx < 1 or bx > 3:
            store(tile(Z, (64, 64), (bx, 0)), zero - 1.0)
    w = minimum(zero + v, 150.0)
    store(tile(W, (64, 64), (bx, 0)), -w)
'''


def _python(bx):
    v = min(bx, 2) * 1000 + max(bx, 1) * 100 + (bx >> 1) * 10 + (bx | 4) + -bx
    z = 1.0 if ((1 <= bx <= 2) or not (bx != 3)) else (-1.0 if (bx < 1 or bx > 3) else np.nan)
    return v, z, -min(v, 150.0)


@pytest.mark.parametrize("mode", ["value", "exact"])
def test_scalar_arithmetic_and_predicates_match_python(mode):
    kernel = compile_kernel(SCALARS)
    opcodes = {op.opcode for op in kernel.walk()}
    # (scalar -x is emitted as 0 - x: arith.neg is checked below, rule by rule)
    for needed in ("arith.min", "arith.max", "arith.shr", "arith.or", "arith.ge",
                   "arith.le", "arith.ne", "arith.not", "arith.land", "arith.lor", "arith.lt",
                   "arith.gt", "math.min", "math.neg"):
        assert needed in opcodes, needed
    out = interpret(kernel, {n: np.full((256, 64), np.nan, np.float32) for n in "YZW"},
                    mode=mode)
    assert out.ok, out.failures()
    for bx in range(4):
        rows = slice(64 * bx, 64 * bx + 64)
        v, z, w = _python(bx)
        assert (out.outputs["Y"][rows] == v).all(), bx
        assert (out.outputs["W"][rows] == w).all(), bx
        np.testing.assert_array_equal(out.outputs["Z"][rows], np.full((64, 64), z, np.float32))


def _call(opcode, *args):
    gen = RULES[opcode](None, None, list(args))
    with pytest.raises(StopIteration) as stop:
        next(gen)
    return stop.value.value


@pytest.mark.parametrize("opcode,args,want", [
    ("arith.add", (3, 4), 7), ("arith.sub", (3, 4), -1), ("arith.mul", (3, 4), 12),
    ("arith.floordiv", (-7, 2), -4), ("arith.mod", (-7, 3), 2), ("arith.min", (3, 4), 3),
    ("arith.max", (3, 4), 4), ("arith.and", (6, 3), 2), ("arith.or", (6, 3), 7),
    ("arith.xor", (6, 3), 5), ("arith.shl", (3, 2), 12), ("arith.shr", (13, 2), 3),
    ("arith.eq", (3, 3), True), ("arith.ne", (3, 3), False), ("arith.lt", (3, 4), True),
    ("arith.le", (4, 4), True), ("arith.gt", (3, 4), False), ("arith.ge", (3, 4), False),
    ("arith.land", (1, 0), False), ("arith.lor", (1, 0), True), ("arith.neg", (5,), -5),
    ("arith.not", (False,), True), ("arith.not", (True,), False), ("arith.not", (5,), -6),
])
def test_each_arith_rule(opcode, args, want):
    assert _call(opcode, *args) == want
