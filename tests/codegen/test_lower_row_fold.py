"""The in-thread fold of a row reduction (argus/codegen/lower/exchange.py) is pairwise: the
steps it emits fold every register exactly once, in ceil(log2 n) dependent steps instead
of a chain of n - 1 (the attention softmax's row max and row sum over 32 registers a row:
5 steps, not 31), and the generated code of a wgmma-accumulator row sum takes that route."""

import math

import pytest

from argus.codegen import generate
from argus.codegen.lower.exchange import tree_steps
from argus.frontend.parse import parse_source


def _fold(n):
    """Emulate the emitted steps over sets of register indices: what t[0] ends up holding,
    and how often each register was combined in."""
    t = [[i] for i in range(n)]
    for half, rest in tree_steps(n):
        for i in range(half):
            t[i] = t[i] + t[i + rest]
    return t[0]


@pytest.mark.parametrize("n", list(range(1, 41)) + [64, 100, 128])
def test_every_register_is_folded_once(n):
    assert sorted(_fold(n)) == list(range(n))


@pytest.mark.parametrize("n", [2, 3, 8, 31, 32, 33, 64])
def test_the_fold_has_logarithmic_depth(n):
    assert len(tree_steps(n)) == math.ceil(math.log2(n))
    assert tree_steps(1) == []


def test_an_accumulator_row_sum_is_folded_pairwise():
    src = ("from argus.lang import *  # noqa: F401,F403\n\n"
           "@kernel(grid=(1,), block=128)\n"
           "def k(X: Tensor[64, 128, fp32], Y: Tensor[64, fp32]):\n"
           "    x = load(tile(X, (64, 128), (0, 0)), \"wgmma_acc_m64n128\")\n"
           "    store(tile(Y, (64,), (0,)), row_sum(x))\n")
    cuda = generate(parse_source(src, "<fold>")["k"]).source
    assert "float argus_t[32];" in cuda
    assert "argus_t[argus_i] = (argus_t[argus_i]) + (argus_t[argus_i + 16]);" in cuda
    assert "argus_t[argus_i] = (argus_t[argus_i]) + (argus_t[argus_i + 1]);" in cuda
    assert "++argus_i) argus_r =" not in cuda           # no chain of 31 dependent adds
