"""Choreography bugs in the GEMM example give wrong answers or reported hazards under the
asynchronous scheduler, never a silent pass: the interpreter does not serialise TMA and
wgmma behind the user's back. The stage-reuse bugs are shown in both interpreter modes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_source
from argus.interp.evaluator import interpret
from argus.interp.machine import Deadlock, Faulted, round_to_bf16

PATH = Path(__file__).resolve().parents[2] / "examples" / "gemm.py"
M, N, K = 128, 256, 64 * 12     # 12 k-steps wrap the 4-stage ring three times
SEEDS = range(6)


def _kernel(old: str | None = None, new: str = ""):
    src = PATH.read_text()
    if old is not None:
        assert old in src, f"example changed: {old!r} not found; update this test"
        src = src.replace(old, new, 1)
    return parse_source(src, str(PATH))["gemm"]


def _inputs():
    rng = np.random.default_rng(11)
    a = round_to_bf16(rng.standard_normal((M, K)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((N, K)).astype(np.float32))
    return a, b, round_to_bf16(a @ b.T)


def _runs(kernel, mode="value"):
    a, b, ref = _inputs()
    for seed in SEEDS:
        result = interpret(kernel, {"A": a, "B": b, "C": np.full((M, N), np.nan, np.float32)},
                           seed=seed, blocks=[0], mode=mode)
        right = np.allclose(result.outputs["C"][:M], ref, rtol=2 ** -7, atol=0.1)
        yield result, right


@pytest.mark.parametrize("mode", ["value", "exact"])
def test_correct_gemm_is_right_and_clean_on_every_seed(mode):
    for result, right in _runs(_kernel(), mode):
        assert result.ok, result.failures()
        assert right


@pytest.mark.parametrize("old,new", [
    # the producer refills a stage without waiting for the consumers to release it
    ("                    wait(empty[s], ((g // S) & 1) ^ 1)\n", ""),
    # the consumers release the stage before the wgmma reading it has retired
    ("                wgmma_wait(0)\n                with elect_one():\n"
     "                    arrive(empty[s])\n",
     "                with elect_one():\n                    arrive(empty[s])\n"
     "                wgmma_wait(0)\n"),
], ids=["no-empty-wait", "release-before-wgmma-wait"])
@pytest.mark.parametrize("mode", ["value", "exact"])
def test_stage_reused_too_early_is_caught(old, new, mode):
    outcomes = list(_runs(_kernel(old, new), mode))
    # the race is reported on every seed, and at least one seed also computes a wrong C
    assert all(not r.ok for r, _ in outcomes), [str(r) for r, _ in outcomes]
    assert any(not right for _, right in outcomes)


def test_missing_wgmma_wait_faults_on_the_accumulator_read():
    kernel = _kernel("                wgmma_wait(0)\n", "")
    a, b, _ = _inputs()
    result = interpret(kernel, {"A": a, "B": b, "C": np.full((M, N), np.nan, np.float32)},
                       seed=0, blocks=[0])
    assert isinstance(result.runs[0], Faulted), result.runs[0]
    assert "in flight" in str(result.runs[0].error)


def test_barrier_never_armed_is_a_deadlock_not_a_hang():
    # the producer never issues the B load: full[s] never receives its expected bytes
    kernel = _kernel("                    tma_load(b_s[s], tile(B, (BN, BK), (tn, k)), full[s])\n",
                     "")
    a, b, _ = _inputs()
    result = interpret(kernel, {"A": a, "B": b, "C": np.full((M, N), np.nan, np.float32)},
                       seed=1, blocks=[0])
    run = result.runs[0]
    assert isinstance(run, Deadlock), run
    assert any(blocked.barrier and blocked.barrier.startswith("full[") for blocked in run.blocked)


def test_arrive_by_the_whole_warpgroup_overflows_the_count():
    # without elect_one, 128 threads arrive on an empty barrier initialised for 2
    kernel = _kernel("                with elect_one():\n                    arrive(empty[s])\n",
                     "                arrive(empty[s])\n")
    a, b, _ = _inputs()
    result = interpret(kernel, {"A": a, "B": b, "C": np.full((M, N), np.nan, np.float32)},
                       seed=0, blocks=[0])
    assert isinstance(result.runs[0], Faulted), result.runs[0]
    assert "empty" in str(result.runs[0].error)
