"""heads.py on integers: a declared column is tagged with the column of the KV head it
meets (the identity for group 1), and the frontend takes heads() of 2-D kernel tensors
only."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import z3

from argus.frontend.parse import parse_source
from argus.verify.tags import heads


def _walker(**declared):
    w = SimpleNamespace()
    heads.table(w).update(declared)
    return w


@pytest.mark.parametrize("cols,group", [(64, 1), (64, 2), (128, 4), (64, 8)])
def test_a_column_is_tagged_with_its_kv_heads_column(cols, group):
    w = _walker(Q=heads.Heads(cols, group))
    for c in range(0, 16 * cols, 7):
        got = z3.simplify(heads.column(w, "Q", z3.BitVecVal(c, 64))).as_long()
        assert got == (c // cols // group) * cols + c % cols


def test_an_undeclared_tensor_keeps_its_columns():
    w = _walker()
    c = z3.BitVec("c", 64)
    assert heads.column(w, "B", c) is c


SOURCE = '''
from argus.lang import Tensor, bf16, heads, kernel, tile, load, store
@kernel(grid=(1,), block=128)
def k(X: Tensor[64, 128, bf16], Y: Tensor[64, 128, bf16]):
    heads(HEADS_ARG)
    store(tile(Y, (64, 64), (0, 0)), load(tile(X, (64, 64), (0, 0)), "wgmma_acc_m64n64"))
'''


def test_heads_is_declared_on_a_kernel_tensor():
    kernel = parse_source(SOURCE.replace("HEADS_ARG", "X, 64, group=2"), "k.py")["k"]
    op = next(op for op in kernel.walk() if op.opcode == "tag.heads")
    assert op.attrs == {"cols": 64, "group": 2}


@pytest.mark.parametrize("args", ["X, 48", "X, 0", "tile(X, (64, 64), (0, 0)), 64"])
def test_heads_refuses_what_is_no_head_block(args):
    with pytest.raises(Exception):
        parse_source(SOURCE.replace("HEADS_ARG", args), "k.py")


GEMM = Path(__file__).resolve().parents[3] / "examples" / "gemm.py"


def _gemm_with(line: str, *edits):
    src = GEMM.read_text().replace("    assume(K % BK == 0)\n",
                                   "    assume(K % BK == 0)\n" + line, 1)
    src = src.replace("from argus.lang import (", "from argus.lang import (heads, ", 1)
    for old, new in edits:
        assert old in src, old
        src = src.replace(old, new)
    return parse_source(src, "gemm_heads.py")["gemm"]


def test_a_declaration_whose_value_lands_in_an_undeclared_tensor_is_not_a_pass():
    """heads() changes what A.k == B.k compares; a GEMM that declares A's columns as heads
    with a group (which would make A's k tile 2t meet B's tile t) and stores into a C
    without a declaration is left unverified: the heads are checked only at a declared
    destination."""
    from argus.verify.driver import verify
    findings = verify(_gemm_with("    heads(A, 64, group=2)\n"))
    assert any(f.check == "tag.not-modelled" and "declares no heads" in f.message
               for f in findings), [f.message for f in findings]
    assert verify(_gemm_with("")) == []
