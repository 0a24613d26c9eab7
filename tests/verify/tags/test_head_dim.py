"""The head dim of S = Q K^T (one product per key block, no counter accumulated): every
column the instructions read must be a column of Q and of K. Found by the differential
fuzz (attention_bhsd-143/144, 2026-12-06): Q's tile at column block qc + 1 or qc - 1 reads
TMA zeros, and the k coverage, taken over the columns the instructions read, was vacuous
there. Each is now a tag.k-coverage error at the S wgmma, and wrong on the interpreter."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from argus.verify.driver import run as verify

sys.path.insert(0, str(Path(__file__).parent))
from test_split_loops import _edited, _kernel, _line, _wrong_on_the_interpreter  # noqa: E402

Q_LOAD = "tma_load(q_s[0], tile(q_src, (64 * WGS, HD), (bx, qc)), q_full[0])"


@pytest.mark.parametrize("block", ["qc + 1", "qc - 1"])
def test_a_head_dim_tile_past_the_tensor_is_caught(block):
    src = _edited(Q_LOAD, Q_LOAD.replace("(bx, qc)", f"(bx, {block})"))
    errors = [f for f in verify(_kernel(src)).findings if f.severity == "error"]
    assert [f.check for f in errors] == ["tag.k-coverage"], [str(f) for f in errors]
    f = errors[0]
    assert f.loc.line == _line(src, "wgmma(s_acc, q_rows, k_stage)")
    assert "never accumulated" in f.message and f.counterexample is not None
    assert _wrong_on_the_interpreter(src)
