"""Index vectors, row gathers (plain and TMA), scatters and atomic adds; rows outside the
tensor (padding, -1) read as zero and are dropped on writes."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_kernels import GATHER_SCATTER, GATHER_TMA, compile_kernel  # noqa: E402

from argus.interp.evaluator import interpret  # noqa: E402
from argus.interp.machine import Faulted, round_to_bf16  # noqa: E402


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("mode", ["value", "exact"])
def test_gather_scatter_and_atomic_add(seed, mode):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((200, 128)).astype(np.float32)
    idx = rng.permutation(200)[:64].astype(np.int32)
    idx[5] = -1                                    # a padding row
    y = np.full_like(x, np.nan)
    z = np.zeros((64, 128), np.float32)
    out = interpret(compile_kernel(GATHER_SCATTER), {"X": x, "I": idx, "Y": y, "Z": z},
                    seed=seed, mode=mode)
    assert out.ok, out.failures()
    real = idx >= 0
    expect_y = np.full_like(x, np.nan)
    expect_y[idx[real]] = 2.0 * x[idx[real]]
    np.testing.assert_array_equal(out.outputs["Y"], expect_y)
    expect_z = np.zeros_like(z)
    expect_z[real] = 2.0 * x[idx[real]]            # two atomic adds of the gathered rows
    np.testing.assert_array_equal(out.outputs["Z"], expect_z)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mode", ["value", "exact"])
def test_gather_tma_lands_through_the_barrier(seed, mode):
    rng = np.random.default_rng(seed)
    x = round_to_bf16(rng.standard_normal((100, 64)).astype(np.float32))
    idx = rng.integers(0, 100, 64).astype(np.int32)
    out = interpret(compile_kernel(GATHER_TMA),
                    {"X": x, "I": idx, "Y": np.full((64, 64), np.nan, np.float32)}, seed=seed,
                    mode=mode)
    assert out.ok, out.failures()
    np.testing.assert_array_equal(out.outputs["Y"], x[idx])


@pytest.mark.parametrize("mode", ["value", "exact"])
def test_gather_tma_read_without_wait_is_caught(mode):
    kernel = compile_kernel(GATHER_TMA.replace("    wait(bar[0], 0)\n", ""))
    x = np.ones((100, 64), np.float32)
    idx = np.arange(64, dtype=np.int32)
    results = [interpret(kernel, {"X": x, "I": idx, "Y": np.full((64, 64), np.nan, np.float32)},
                         seed=s, mode=mode) for s in range(4)]
    assert all(not r.ok for r in results)


def test_expect_tx_by_every_thread_is_refused():
    """Outside elect_one all 128 threads arrive on a barrier initialised for one."""
    src = GATHER_TMA.replace("    with elect_one():\n        expect_tx(bar[0], nbytes(buf[0]))\n"
                             "        gather_tma(", "    expect_tx(bar[0], nbytes(buf[0]))\n"
                             "    gather_tma(")
    assert src != GATHER_TMA
    out = interpret(compile_kernel(src), {"X": np.ones((100, 64), np.float32),
                                          "I": np.arange(64, dtype=np.int32),
                                          "Y": np.full((64, 64), np.nan, np.float32)})
    assert isinstance(out.runs[0], Faulted), out.runs[0]
