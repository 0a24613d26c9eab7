"""elect_one(scope="warp") runs on one thread of each warp: four per warpgroup. A GEMM whose
consumers release each stage with one arrival per warp (empty barriers initialised to 4
per consumer warpgroup) is correct on the GPU and must run clean on the interpreter; the
same release inside elect_one() (one thread per warpgroup) leaves the barrier short."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_source
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from argus.verify.driver import run as verify

PATH = Path(__file__).resolve().parents[2] / "examples" / "gemm.py"
M, N, K = 128, 256, 64 * 6      # 6 k-steps wrap the 4-stage ring


def _gemm(arrivals: int, release_scope: str, producer_scope: str = "warpgroup"):
    src = PATH.read_text()
    edits = [("mbarrier_init(full[s], 1)",
              f"mbarrier_init(full[s], {4 if producer_scope == 'warp' else 1})"),
             ("""    with role("producer", warpgroups=(0,), regs=40):
        with elect_one():""", f"""    with role("producer", warpgroups=(0,), regs=40):
        with elect_one({producer_scope!r}):"""),("mbarrier_init(empty[s], 2)", f"mbarrier_init(empty[s], {arrivals})"),
             ("""                with elect_one():
                    arrive(empty[s])""", f"""                with elect_one({release_scope!r}):
                    arrive(empty[s])""")]
    for old, new in edits:
        assert old in src, f"examples/gemm.py changed: {old!r} not found; update this test"
        src = src.replace(old, new, 1)
    return parse_source(src, str(PATH))["gemm"]


def _run(kernel, seed):
    rng = np.random.default_rng(5)
    a = round_to_bf16(rng.standard_normal((M, K)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((N, K)).astype(np.float32))
    result = interpret(kernel, {"A": a, "B": b, "C": np.full((M, N), np.nan, np.float32)},
                       seed=seed, blocks=[0])
    right = np.allclose(result.outputs["C"], round_to_bf16(a @ b.T), rtol=2 ** -7, atol=0.1)
    return result, right


@pytest.mark.parametrize("seed", [0, 3])
def test_one_arrival_per_warp_completes_a_count_of_four_per_warpgroup(seed):
    kernel = _gemm(8, "warp")            # 2 consumer warpgroups x 4 warps
    result, right = _run(kernel, seed)
    assert result.ok, result.failures()
    assert right
    report = verify(kernel)
    assert report.ok, [f.message for f in report.findings]


def test_a_load_in_each_warp_is_issued_four_times():
    # four threads each expect the stage's bytes and each issue the loads, as the generated
    # `if (threadIdx.x % 32 == 0)` does: the bytes balance (no deadlock, the stage fills),
    # and the four copies of one box into the same bytes are reported as the race they are
    kernel = _gemm(8, "warp", producer_scope="warp")
    result, _ = _run(kernel, 1)
    text = " ".join(result.failures())
    assert "deadlock" not in text, text
    assert "race on a_s" in text and "TMA load" in text, text


def test_one_arrival_per_warpgroup_leaves_a_count_of_eight_short():
    kernel = _gemm(8, "warpgroup")       # only 2 arrivals per phase on a count of 8
    result, _ = _run(kernel, 0)
    assert not result.ok
    text = " ".join(result.failures())
    assert "deadlock" in text and "empty[" in text, text
