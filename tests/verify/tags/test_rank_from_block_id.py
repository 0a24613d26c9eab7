"""Issue 19, item 6 (b): the library GEMM in 2- and 4-block clusters with the rank written
as `block_id("x") % CM` (equal to cluster_rank() on a 1-D grid) verifies clean and gives
the right answer on the interpreter: in a kernel that walks a schedule over a grid of
constant extents, block_id is the coordinate of the walk's own block (cluster.py), not an
unrelated variable. A rank taken from the wrong block id arithmetic is still caught."""

from __future__ import annotations

import numpy as np
import pytest

from argus.frontend.parse import parse_source
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from argus.ops.library import KERNEL_DIR
from argus.verify.driver import verify
from argus.verify.tags.walker import Walker

SOURCE = (KERNEL_DIR / "gemm.py").read_text()
RANK = "        rank = cluster_rank()\n"


def edited(rank_expr: str) -> str:
    assert RANK in SOURCE
    return SOURCE.replace(RANK, f"        rank = {rank_expr}\n").replace(
        "from argus.lang import (Tensor,", "from argus.lang import (Tensor, block_id,")


def kernel(src, name="gemm_nt", **overrides):
    return parse_source(src, "gemm.py", {"CM": 2, **overrides})[name]


@pytest.mark.parametrize("cm", [2, 4])
@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
def test_rank_as_block_id_mod_cm_verifies_clean(name, cm):
    assert verify(kernel(edited('block_id("x") % CM'), name, CM=cm)) == []


def test_block_id_is_the_walks_block_in_a_cluster_walk():
    w = Walker(kernel(edited('block_id("x") % CM')))
    w.run()
    assert "block_x" not in w.ctx.vars          # a term over cluster and rank, not a var
    assert {"cluster", "rank"} <= set(w.ctx.vars)


def test_rank_as_block_id_mod_cm_gives_the_right_answer():
    rng = np.random.default_rng(3)
    m, n, k = 512, 256, 128
    a = round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((n, k)).astype(np.float32))
    res = interpret(kernel(edited('block_id("x") % CM'), BLOCKS=4),
                    {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)}, seed=0)
    assert res.ok, res.failures()
    ref = a @ b.T
    assert np.all(np.abs(res.outputs["C"] - ref) <= 2 ** -7 * (np.abs(ref) + np.abs(ref).max()))


def test_a_rank_that_is_not_the_blocks_rank_is_still_an_error():
    # block_id // CM names the cluster, not the rank: blocks of one cluster collide
    findings = verify(kernel(edited('(block_id("x") // CM) % CM')))
    assert any(f.severity == "error" and f.check.startswith("tag.") for f in findings)


OUTSIDE = '''from argus.lang import *

@kernel(grid=(4,), block=128)
def k(X: Tensor["M", 64, fp32], Y: Tensor[64, 64, fp32]):
    assume(M % 64 == 0)
    for i, tm in schedule(M // 64):
        v = load(tile(X, (64, 64), (tm, 0)), "blocked")
        store(tile(X, (64, 64), (tm, 0)), v)
    b = block_id("x")
    w = load(tile(Y, (64, 64), (ROWS, 0)), "blocked")
    store(tile(Y, (64, 64), (ROWS, 0)), w)
'''


def test_outside_the_schedule_the_walker_variable_tells_blocks_apart():
    """block_id() derived from the walk: the schedule's store is no race (its tiles tell
    blocks apart), and outside the schedule the block still identifies the writer: every
    block writing the same rows is a race, one block per rows is none."""
    racy = parse_source(OUTSIDE.replace("ROWS", "b // 8"), "k.py")["k"]
    found = [f for f in verify(racy) if f.check == "tag.store-race"]
    assert [f.loc.line for f in found] == [11]
    fine = parse_source(OUTSIDE.replace("Tensor[64, 64, fp32]", "Tensor[256, 64, fp32]")
                        .replace("ROWS", "b"), "k.py")["k"]
    assert [f for f in verify(fine) if f.severity == "error"] == []
