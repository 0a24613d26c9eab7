"""Replay of counterexamples (argus/verify/replay.py): an error whose counterexample names
a point no run reaches is a defect of the verifier (`verify.replay`, verdict unverified),
never the user's bug; one that is reached stays an error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from argus.frontend.parse import parse_file
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from argus.verify import driver, replay
from argus.verify.finding import Counterexample, Finding

REPO = Path(__file__).resolve().parents[2]
GEMM = REPO / "examples" / "gemm.py"
SPLIT = Path(__file__).resolve().parent / "cases" / "split_k_loop.py"


def gemm():
    return parse_file(GEMM)["gemm"]


def line_of(path: Path, text: str) -> int:
    return next(i for i, s in enumerate(path.read_text().splitlines(), 1) if text in s)


def at(kernel, line: int, check: str = "protocol.stage", **cex) -> Finding:
    op = next(o for o in kernel.walk() if o.loc.line == line)
    return Finding(check, "error", "m", op.loc, op.opcode, "h", Counterexample(**cex))


def test_a_schedule_step_the_block_never_takes_does_not_replay():
    k = gemm()
    wait = line_of(GEMM, "wait(full[s], (g // S) & 1)")
    # M=128, N=256: one tile, so no block of the 132 takes a step i = 1
    f = at(k, wait, sizes={"M": 128, "N": 256, "K": 128}, iteration={"i": 1, "k": 0})
    why = replay.unreachable(k, f)
    assert why is not None and "i=1" in why
    (out,) = replay.confirm(k, [f])
    assert out.check == "verify.replay" and out.severity == "warning" and out.unproved
    assert "defect of the verifier" in out.message and out.loc == f.loc


def test_a_step_some_block_takes_replays():
    k = gemm()
    wait = line_of(GEMM, "wait(full[s], (g // S) & 1)")
    # 133 row tiles: block 0 takes tiles 0 and 132, so its step i = 1 exists
    f = at(k, wait, sizes={"M": 128 * 133, "N": 256, "K": 128}, iteration={"i": 1, "k": 1},
           block=(0,))
    assert replay.unreachable(k, f) is None
    assert replay.confirm(k, [f]) == [f]
    # ... but not in block 1 (it takes tile 1 only), nor with k past KT = 2
    assert replay.unreachable(k, at(k, wait, sizes=f.counterexample.sizes,
                                    iteration={"i": 1, "k": 0}, block=(1,))) is not None
    assert replay.unreachable(k, at(k, wait, sizes=f.counterexample.sizes,
                                    iteration={"i": 0, "k": 2}, block=(0,))) is not None


def test_sizes_that_break_an_assumption_and_blocks_outside_the_grid_do_not_replay():
    k = gemm()
    wgmma = line_of(GEMM, "wgmma(acc,")
    why = replay.unreachable(k, at(k, wgmma, "tag.wgmma-k", sizes={"M": 100, "N": 256,
                                                                   "K": 64}))
    assert why is not None and "assumption at line 28" in why
    why = replay.unreachable(k, at(k, wgmma, "tag.wgmma-k", sizes={"M": 128, "N": 256,
                                                                   "K": 64}, block=(132,)))
    assert why is not None and "outside the grid" in why


def test_a_coverage_witness_may_name_the_iteration_that_does_not_run():
    """'k = 64 is never accumulated: the loop skips k = 1' names a step that no run takes
    on purpose; only its sizes are replayed."""
    k = gemm()
    store = line_of(GEMM, "store(dst, out)")
    f = at(k, store, "tag.k-coverage", sizes={"M": 128, "N": 256, "K": 64},
           iteration={"i": 0, "k": 1})
    assert replay.unreachable(k, f) is None


def test_findings_without_sizes_or_warnings_are_left_alone():
    k = gemm()
    wait = line_of(GEMM, "wait(full[s], (g // S) & 1)")
    f = at(k, wait, iteration={"i": 7})
    w = Finding("tag.undecided", "warning", "m", f.loc, "wait", "h", f.counterexample)
    assert replay.confirm(k, [f, w]) == [f, w]


def test_the_split_k_loop_is_correct_and_verifies():
    kernel = parse_file(SPLIT)["gemm"]
    rng = np.random.default_rng(0)
    m, n, kk = 128, 256, 256
    a = round_to_bf16(rng.standard_normal((m, kk)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((n, kk)).astype(np.float32))
    out = interpret(kernel, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)})
    ref = a.astype(np.float64) @ b.T.astype(np.float64)
    assert np.abs(out.outputs["C"] - ref).max() <= 2 ** -7 * np.abs(ref).max()
    r = driver.run(kernel)
    # the protocol pass used to name step i=1 at one tile (replay turned it into a
    # verify.replay defect); since the tied products of protocol/terms.py it proves the
    # kernel outright: no finding, nothing for replay to flag
    assert r.findings == [] and r.verdict == "verified", [str(f) for f in r.findings]


def test_the_rank_written_as_block_id_mod_cm_is_correct_and_verifies():
    """rank = block_id("x") % CM equals cluster_rank() on this grid; the tag pass used to
    name a race with a second writer in block 0 at rank 1, which no run has."""
    path = Path(__file__).resolve().parent / "cases" / "cluster_rank_by_block_id.py"
    kernel = parse_file(path)["gemm"]
    rng = np.random.default_rng(0)
    m, n, kk = 256, 128, 128                  # one cluster's two row tiles: all of C
    a = round_to_bf16(rng.standard_normal((m, kk)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((n, kk)).astype(np.float32))
    out = interpret(kernel, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)},
                    blocks=[0])
    ref = a.astype(np.float64) @ b.T.astype(np.float64)
    assert np.abs(out.outputs["C"] - ref).max() <= 2 ** -7 * np.abs(ref).max()
    # in a fresh process: which second writer the tag pass names depends on what the
    # process proved before (its memo of unsat queries); a fresh `argus check` names rank 1
    done = subprocess.run([sys.executable, "-m", "argus.cli.main", "check", str(path),
                           "--json"], capture_output=True, text=True, cwd=REPO)
    (k,) = json.loads(done.stdout)["kernels"]
    # the race (and the stage-fill error) came from block_id being unrelated to the walk's
    # rank; since tags/cluster.py derives it from the walk, the kernel verifies outright
    # and neither the race nor a replay defect is reported
    assert k["findings"] == [] and k["verdict"] == "verified", k["findings"]
