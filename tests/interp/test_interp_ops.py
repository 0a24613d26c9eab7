"""Per-family semantics of the evaluator on small kernels, fresh seeded inputs, outputs
poisoned with NaN."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_kernels import (CLUSTER, MATH, ROLES, SCHEDULE, TMA_STORE,  # noqa: E402
                            compile_kernel)

from argus.interp.evaluator import interpret  # noqa: E402
from argus.interp.machine import round_to_bf16  # noqa: E402


def _nan(shape):
    return np.full(shape, np.nan, np.float32)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("mode", ["value", "exact"])
def test_math_reductions_casts_and_coordinates(seed, mode):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((128, 64)).astype(np.float32)
    # plant a known maximum of 5 + row in each row
    x[np.arange(128), rng.integers(0, 64, 128)] = 5.0 + np.arange(128) % 64
    out = interpret(compile_kernel(MATH), {"X": x, "Y": _nan(x.shape), "R": _nan(x.shape),
                                           "C": _nan(x.shape)}, seed=seed, mode=mode)
    assert out.ok, out.failures()
    y, r, c = out.outputs["Y"], out.outputs["R"], out.outputs["C"]
    # exp2(relu(x)) - 2 max(x, 0): 1 where x <= 0
    neg = x <= 0
    assert np.all(y[neg] == 1.0)
    pos = ~neg
    np.testing.assert_allclose(y[pos], 2.0 ** x[pos] - 2 * x[pos], rtol=1e-6)
    # row_max + row_sum(ones) + col - row, per block (row and col are tile coordinates)
    row = np.arange(128)[:, None] % 64
    col = np.arange(64)[None, :]
    np.testing.assert_array_equal(r, (5.0 + row) + 64.0 + col - row)
    np.testing.assert_array_equal(c, round_to_bf16(x))
    assert not np.array_equal(c, x)  # the cast did round


@pytest.mark.parametrize("mode", ["value", "exact"])
def test_tma_store_through_shared_memory(mode):
    rng = np.random.default_rng(4)
    x = round_to_bf16(rng.standard_normal((192, 64)).astype(np.float32))
    out = interpret(compile_kernel(TMA_STORE), {"X": x, "Y": _nan(x.shape)}, seed=4, mode=mode)
    assert out.ok, out.failures()
    np.testing.assert_array_equal(out.outputs["Y"], x)


@pytest.mark.parametrize("mode", ["value", "exact"])
def test_tma_store_without_proxy_fence_is_reported(mode):
    kernel = compile_kernel(TMA_STORE.replace("    fence_proxy_async()\n", ""))
    x = np.ones((64, 64), np.float32)
    out = interpret(kernel, {"X": x, "Y": _nan(x.shape)}, seed=0, mode=mode)
    assert not out.ok
    assert any(h.kind == "missing-proxy-fence" for r in out.runs.values() for h in r.hazards)


@pytest.mark.parametrize("order", ["row_major", "grouped", "swizzled"])
@pytest.mark.parametrize("mode", ["value", "exact"])
def test_schedule_visits_every_tile_once_with_if(order, mode):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((5 * 64, 3 * 64)).astype(np.float32)
    out = interpret(compile_kernel(SCHEDULE.replace("ORDER", order).replace(
        "GROUP", "" if order == "row_major" else ", group=2")),
                    {"X": x, "Y": _nan(x.shape)}, seed=2, mode=mode)
    assert out.ok, out.failures()
    tm = np.arange(x.shape[0])[:, None] // 64
    tn = np.arange(x.shape[1])[None, :] // 64
    np.testing.assert_array_equal(out.outputs["Y"], np.where((tm + tn) % 2 == 0, x, -x))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("mode", ["value", "exact"])
def test_roles_and_named_barrier(seed, mode):
    x = np.random.default_rng(seed).standard_normal((64, 64)).astype(np.float32)
    out = interpret(compile_kernel(ROLES), {"X": x, "Y": _nan(x.shape)}, seed=seed, mode=mode)
    assert out.ok, out.failures()
    np.testing.assert_array_equal(out.outputs["Y"], x + 1.0)


@pytest.mark.parametrize("mode", ["value", "exact"])
def test_roles_without_the_barrier_race(mode):
    kernel = compile_kernel(ROLES.replace("        named_barrier(1, 256)\n", ""))
    x = np.ones((64, 64), np.float32)
    out = interpret(kernel, {"X": x, "Y": _nan(x.shape)}, seed=0, mode=mode)
    assert not out.ok
    assert any(h.kind == "race" for r in out.runs.values() for h in r.hazards)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mode", ["value", "exact"])
def test_single_block_cluster_rank_and_sync(seed, mode):
    x = np.random.default_rng(seed).standard_normal((128, 64)).astype(np.float32)
    out = interpret(compile_kernel(CLUSTER), {"X": x, "Y": _nan(x.shape)}, seed=seed, mode=mode)
    assert out.ok, out.failures()
    np.testing.assert_array_equal(out.outputs["Y"], 2.0 * x)


def test_fragment_without_init_reads_as_nan():
    from interp_kernels import UNINITIALISED
    out = interpret(compile_kernel(UNINITIALISED), {"Y": np.zeros((64, 64), np.float32)})
    assert out.ok, out.failures()
    assert np.isnan(out.outputs["Y"]).all()
