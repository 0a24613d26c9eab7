"""The cluster GEMM bug corpus (examples/bugs/gemm_cluster/): each file is the library's
2-block cluster GEMM (argus/kernels/gemm.py with CM=2) specialised by hand with one
realistic mistake. The verifier reports every finding its docstring names, at that line,
as an error with a counterexample; the interpreter, running the buggy kernel (a cluster's
blocks on one machine) at the counterexample's sizes and block, gives a wrong answer at
the element named or deadlocks at the barrier named. The missing exit sync is the one the
interpreter cannot show (it does not model a block's exit)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_file
from argus.interp.evaluator import interpret
from argus.interp.machine import Deadlock, round_to_bf16
from argus.verify import verify

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "bugs" / "gemm_cluster"
FILES = sorted(CORPUS.glob("*.py"))
EXPECTED = re.compile(r"Expected: (\S+) at line (\d+)\.")
TOL = 2 ** -7


def path(name: str) -> Path:
    return CORPUS / f"{name}.py"


def expected(name: str) -> list[tuple[str, int]]:
    found = [(c, int(n)) for c, n in EXPECTED.findall(path(name).read_text())]
    assert found, f"{name}.py: the docstring names no 'Expected: <check> at line <n>.'"
    return found


@lru_cache(maxsize=None)
def analysed(name: str):
    kernel = parse_file(path(name))["gemm"]
    return kernel, tuple(verify(kernel))


def the(name: str, check: str):
    """The finding of `check` at the line the docstring names."""
    line = dict(expected(name))[check]
    _, findings = analysed(name)
    hits = [f for f in findings if f.check == check and f.loc.line == line]
    assert hits, f"{name}: no {check} at line {line}; got " + "; ".join(
        f"{f.check}@{f.loc.line}" for f in findings)
    return hits[0]


def source_line(name: str, line: int) -> str:
    return path(name).read_text().splitlines()[line - 1]


def is_nn(kernel) -> bool:
    return kernel.params[1].type.shape == ("K", "N")


def run(name: str, m: int, n: int, k: int, block=None, seed: int = 0):
    """The buggy kernel on random bf16 inputs: (result, C, reference)."""
    kernel, _ = analysed(name)
    rng = np.random.default_rng(5)
    a = round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((k, n) if is_nn(kernel) else (n, k))
                      .astype(np.float32))
    result = interpret(kernel, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)},
                       seed=seed, blocks=list(block) if block else None)
    ref = a.astype(np.float64) @ (b if is_nn(kernel) else b.T).astype(np.float64)
    return result, result.outputs["C"], ref


def wrong(out, ref, idx) -> bool:
    return bool(np.isnan(out[idx]) or abs(out[idx] - ref[idx]) > TOL * np.abs(ref).max())


def computed_by(kernel, cex) -> tuple[int, int]:
    """The C element the counterexample's thread and register compute: M tile
    cm * CM + rank, its warpgroup's 64 rows, the register's cell."""
    c = kernel.constants
    first = min(r.warpgroups[0] for r in kernel.launch.roles if r.name == "consumer")
    tm = cex.iteration["cm"] * 2 + cex.iteration["rank"]
    return (tm * c["BM"] + (cex.warpgroup - first) * 64 + cex.cell[0],
            cex.iteration["tn"] * c["BN"] + cex.cell[1])


def blocked_on(result, barrier: str) -> bool:
    return any(isinstance(r, Deadlock) and any(b.barrier == barrier for b in r.blocked)
               for r in result.runs.values())


def test_the_corpus_has_its_eight_bugs():
    assert [p.stem for p in FILES] == [
        "band_of_peer_rank", "band_wrong_k_step", "empty_counts_one_block",
        "missing_exit_sync", "multicast_mask_one", "overlapping_cluster_tiles",
        "release_own_block_only", "schedule_by_block"]


@pytest.mark.parametrize("name", [p.stem for p in FILES])
def test_every_expected_finding_is_an_error_at_its_line_with_a_counterexample(name):
    kernel, findings = analysed(name)
    assert kernel.launch.cluster == (2, 1, 1)
    for check, line in expected(name):
        f = the(name, check)
        assert f.severity == "error"
        assert f.loc.file.endswith(f"{name}.py")
        assert f.counterexample is not None
        assert f.hint and "\n" not in f.hint and "Traceback" not in f.message


def test_multicast_mask_one_names_block_one_and_deadlocks_there():
    fill = the("multicast_mask_one", "tag.stage-fill")
    assert "multicast=1" in source_line("multicast_mask_one", fill.loc.line + 2)
    cex = fill.counterexample
    assert cex.iteration["rank"] == 1 and cex.block == (1,)
    assert cex.elements[0].tensor == "b_s[stage]" and cex.elements[0].actual["writers"] == 0
    assert "multicast to ranks [0]" in fill.message
    tx = the("multicast_mask_one", "protocol.expect-tx")
    assert tx.counterexample.block == (1,) and tx.counterexample.barrier == "full[0]"
    m, n, k = (cex.sizes[s] for s in ("M", "N", "K"))
    result, _, _ = run("multicast_mask_one", m, n, k, block=cex.block)
    assert not result.ok and blocked_on(result, "cta1.full[0]")


def test_band_of_peer_rank_swaps_the_columns_and_the_interpreter_agrees():
    f = the("band_of_peer_rank", "tag.assert")
    cex = f.counterexample
    (e,) = cex.elements
    dst = (e.expected["coord[0]"], e.expected["coord[1]"])
    came_from = (e.actual["tag.row"], e.actual["tag.col"])
    assert dst[0] == came_from[0] and abs(dst[1] - came_from[1]) == 64   # the other half
    assert "rank" in cex.iteration and cex.block is not None
    m, n, k = (cex.sizes[s] for s in ("M", "N", "K"))
    result, out, ref = run("band_of_peer_rank", m, n, k, block=cex.block)
    assert result.ok and wrong(out, ref, dst)
    # and on a shape where both halves exist: column j holds column j +- 64
    result, out, ref = run("band_of_peer_rank", 128, 128, 64, block=(0,))
    swapped = np.concatenate([ref[:, 64:], ref[:, :64]], axis=1)
    np.testing.assert_allclose(out, swapped, rtol=TOL, atol=TOL * np.abs(ref).max())


def test_band_wrong_k_step_needs_a_second_k_step_and_the_interpreter_agrees():
    f = the("band_wrong_k_step", "tag.wgmma-k")
    cex = f.counterexample
    assert cex.iteration["k"] == 1 and cex.sizes["K"] > 64
    (e,) = cex.elements
    assert e.actual["a.k"] != e.actual["b.k"]
    kernel, _ = analysed("band_wrong_k_step")
    m, n, k = (cex.sizes[s] for s in ("M", "N", "K"))
    result, out, ref = run("band_wrong_k_step", m, n, k, block=cex.block)
    assert result.ok and wrong(out, ref, computed_by(kernel, cex))
    result, out, ref = run("band_wrong_k_step", m, n, 64, block=cex.block)   # one k-step
    assert result.ok and not wrong(out, ref, computed_by(kernel, cex))


def test_empty_counting_one_block_completes_phases_early_and_deadlocks_there():
    f = the("empty_counts_one_block", "protocol.arrival-count")
    cex = f.counterexample
    assert "gets 4 arrivals" in f.message and "counts 2" in f.message
    assert cex.block == (0,) and cex.barrier == "empty[0]"
    # the early phases show once the ring of 6 stages has gone round: 20 k-steps
    result, _, _ = run("empty_counts_one_block", 256, 128, 64 * 20, block=cex.block)
    assert not result.ok and blocked_on(result, "cta0.empty[0]")


def test_release_in_own_block_only_never_completes_a_phase():
    f = the("release_own_block_only", "protocol.arrival-count")
    cex = f.counterexample
    assert "gets 1 arrivals" in f.message and "never completes" in f.message
    assert cex.block == (0,) and cex.barrier == "empty[0]"
    assert "cta=r" in f.hint
    result, _, _ = run("release_own_block_only", 64, 64, 64 * 14, block=cex.block)
    assert not result.ok and blocked_on(result, "cta0.empty[0]")


def test_overlapping_cluster_tiles_race_and_leave_the_last_rows_unwritten():
    race = the("overlapping_cluster_tiles", "tag.store-race")
    first, second = race.counterexample.iteration, race.counterexample.elements[0].actual[
        "second writer"]
    # two blocks of two clusters write one M tile: cm + rank is the same
    assert first["cm"] + first["rank"] == second["cm"] + second["rank"]
    assert first["rank"] != second["rank"]
    cover = the("overlapping_cluster_tiles", "tag.store-coverage")
    (e,) = cover.counterexample.elements
    m, n, k = (cover.counterexample.sizes[s] for s in ("M", "N", "K"))
    result, out, ref = run("overlapping_cluster_tiles", m, n, k)
    assert result.ok and np.isnan(out[tuple(e.index)])
    # the doubly written rows hold the right values (both writers compute the same tile)
    row, col = race.counterexample.elements[0].index
    assert not wrong(out, ref, (row, col))


def test_schedule_by_block_mixes_two_tiles_in_one_stage():
    steps = the("schedule_by_block", "protocol.cluster-steps")
    assert "by=\"cluster\"" in steps.hint
    assert "schedule(" in source_line("schedule_by_block", steps.loc.line)
    f = the("schedule_by_block", "tag.wgmma-col")
    cex = f.counterexample
    (e,) = cex.elements
    assert e.actual["b.row"] != cex.iteration["tn"] * 64 + cex.cell[1]
    kernel, _ = analysed("schedule_by_block")
    m, n, k = (cex.sizes[s] for s in ("M", "N", "K"))
    result, out, ref = run("schedule_by_block", m, n, k, block=cex.block)
    assert wrong(out, ref, computed_by(kernel, cex))


def test_missing_exit_sync_is_reported_at_the_last_remote_arrive():
    f = the("missing_exit_sync", "protocol.cluster-exit-sync")
    assert "cta=r" in source_line("missing_exit_sync", f.loc.line)
    assert f.counterexample.barrier == "empty[0]"
    # the interpreter does not model a block's exit (an exited CTA's shared memory and
    # barriers stay alive), so it cannot show this bug: the docstring says so
    assert "not confirmable" in path("missing_exit_sync").read_text()


def test_the_fixed_kernels_verify_clean():
    """Undoing each bug (the library kernel's own lines) gives a kernel with no finding:
    the findings are about the mistake, not about the cluster machinery."""
    from argus.frontend.parse import parse_source
    fixes = {
        "multicast_mask_one": [("multicast=1)", "multicast=(1 << CM) - 1)")],
        "band_wrong_k_step": [("(k + rank, tn)", "(k * CM + rank, tn)")],
        "overlapping_cluster_tiles": [("tm = cm + rank", "tm = cm * CM + rank")],
    }
    for name, edits in fixes.items():
        src = path(name).read_text()
        for old, new in edits:
            assert old in src
            src = src.replace(old, new)
        kernel = parse_source(src, str(path(name)))["gemm"]
        assert [str(f) for f in verify(kernel)] == [], name
