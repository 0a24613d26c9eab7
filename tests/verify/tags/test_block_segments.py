"""Segments indexed by a block id (`segment(Y, bh * SQ, SQ)` with `RQ // SQ` blocks under
`assume(RQ % SQ == 0)`, the attention kernels' heads): in bounds, disjoint and covering
the tensor, proved through the quotient symbol RQ / SQ (argus/verify/quotients.py) and the
common-factor facts of product atoms (smt.Context.mul), with no bit-blasted divider. The
same proofs stay sound: a segment one row too long, a grid one block too large, a start
off by one, or a grid one block short is an error whose counterexample replays on the
interpreter's semantics (argus/verify/replay.py)."""

from __future__ import annotations

import numpy as np
import pytest

from argus.frontend import parse_source
from argus.interp.evaluator import interpret
from argus.verify import driver, quotients, replay

HEADS = '''\
from argus.lang import Dim, Tensor, assume, block_id, fp32, kernel, load, segment, store, tile


@kernel(grid=("RQ // SQ",), block=128)
def heads(X: Tensor["RQ", 64, fp32], Y: Tensor["RQ", 64, fp32], SQ: Dim):
    assume(RQ % SQ == 0)
    bh = block_id("x")
    src = segment(X, bh * SQ, SQ)
    dst = segment(Y, START, ROWS)
    for t in range((SQ + 63) // 64):
        x = load(tile(src, (64, 64), (t, 0)), "blocked")
        store(tile(dst, (64, 64), (t, 0)), x)
'''


def heads(start="bh * SQ", rows="SQ", grid="RQ // SQ"):
    src = HEADS.replace("START", start).replace("ROWS", rows).replace('"RQ // SQ"', f'"{grid}"')
    return parse_source(src, "heads.py")["heads"]


def test_the_quotient_of_a_divisibility_assumption_is_found():
    assert quotients.divisible_pairs(heads()) == [("RQ", "SQ")]


def test_block_indexed_segments_verify_and_the_kernel_copies():
    k = heads()
    r = driver.run(k)
    assert r.verdict == "verified", [str(f) for f in r.findings]
    x = np.arange(6 * 80 * 64, dtype=np.float32).reshape(6 * 80, 64)
    out = interpret(k, {"X": x, "Y": np.full_like(x, np.nan), "SQ": 80})
    assert out.ok and np.array_equal(out.outputs["Y"], x)


def errors(k):
    r = driver.run(k)
    return r, {f.check: f for f in r.findings if f.severity == "error"}


@pytest.mark.parametrize("edit, check", [
    (dict(rows="SQ + 1"), "tag.index-range"),         # the last head's segment runs past RQ
    (dict(start="bh * SQ + 1"), "tag.index-range"),   # so does a start off by one
    (dict(grid="RQ // SQ + 1"), "tag.index-range"),   # and a block past the last head
])
def test_a_segment_past_the_tensor_is_an_error_that_replays(edit, check):
    k = heads(**edit)
    r, found = errors(k)
    assert r.verdict == "failed" and check in found, [str(f) for f in r.findings]
    f = found[check]
    assert f.counterexample is not None and f.counterexample.sizes
    assert replay.unreachable(k, f) is None       # the point is reached: a real bug


def test_overlapping_segments_are_a_race_that_replays():
    k = heads(rows="SQ + 64")                # heads overlap by 64 rows
    _, found = errors(k)
    f = found.get("tag.store-race")
    assert f is not None, sorted(found)
    assert replay.unreachable(k, f) is None


def test_a_grid_half_as_large_leaves_heads_unwritten():
    k = heads(grid="(RQ // SQ + 1) // 2")
    _, found = errors(k)
    f = found.get("tag.store-coverage")
    assert f is not None, sorted(found)
    sizes = f.counterexample.sizes
    assert sizes["RQ"] // sizes["SQ"] >= 2           # a head no block takes


def test_a_head_whose_store_a_condition_skips_is_unwritten():
    # the last head's block stores nothing: its rows are in no written window
    src = HEADS.replace("START", "bh * SQ").replace("ROWS", "SQ").replace(
        "        store(tile(dst, (64, 64), (t, 0)), x)",
        "        if bh + 1 < RQ // SQ:\n            store(tile(dst, (64, 64), (t, 0)), x)")
    k = parse_source(src, "heads.py")["heads"]
    _, found = errors(k)
    f = found.get("tag.store-coverage")
    assert f is not None, sorted(found)
    assert replay.unreachable(k, f) is None
