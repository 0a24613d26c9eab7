"""The examples run on the interpreter and agree with their NumPy references on fresh
seeded random inputs; outputs start as NaN so an unwritten element can never pass."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_kernel
from argus.interp.evaluator import interpret
from argus.interp.machine import Completed, round_to_bf16

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _reference(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reference


@pytest.mark.parametrize("mode", ["value", "exact"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("shape", [(64, 64), (128, 192)])
def test_copy_matches_reference(seed, shape, mode):
    kernel = parse_kernel(EXAMPLES / "copy.py", "copy")
    rng = np.random.default_rng(1000 + seed)
    x = rng.standard_normal(shape).astype(np.float32)
    y = np.full(shape, np.nan, np.float32)
    result = interpret(kernel, {"X": x, "Y": y}, seed=seed, mode=mode)
    assert result.ok, result.failures()
    out = result.outputs["Y"]
    assert not np.isnan(out).any()
    np.testing.assert_array_equal(out, _reference("copy")(x))


GEMM_CASES = [(seed, mnk, "value") for seed in (0, 5)
              for mnk in ((128, 256, 64), (128, 256, 320), (256, 512, 128))]
GEMM_CASES += [(3, (128, 256, 320), "exact"), (4, (256, 512, 128), "exact")]


@pytest.mark.parametrize("seed,mnk,mode", GEMM_CASES)
def test_gemm_matches_reference(seed, mnk, mode):
    m, n, k = mnk
    kernel = parse_kernel(EXAMPLES / "gemm.py", "gemm")
    rng = np.random.default_rng(2000 + seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    result = interpret(kernel, {"A": a, "B": b, "C": c}, seed=seed, mode=mode)
    assert all(isinstance(r, Completed) for r in result.runs.values()), result.failures()
    assert result.ok, result.failures()
    out = result.outputs["C"]
    assert not np.isnan(out).any()
    # the kernel sees bf16 inputs, accumulates in fp32 and rounds the output to bf16
    ref = _reference("gemm")(round_to_bf16(a), round_to_bf16(b))
    np.testing.assert_allclose(out, ref, rtol=2 ** -7, atol=2 ** -7 * np.abs(ref).max())


def test_gemm_wrong_answer_is_caught():
    """The comparison above can fail: a GEMM whose B was transposed is far off."""
    m, n, k = 128, 256, 256
    kernel = parse_kernel(EXAMPLES / "gemm.py", "gemm")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32)
    result = interpret(kernel, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)})
    wrong = _reference("gemm")(round_to_bf16(a), round_to_bf16(b)[::-1])
    assert not np.allclose(result.outputs["C"], wrong, rtol=2 ** -7, atol=1e-2)


def test_gemm_persistent_block_walks_several_tiles():
    """One block of the 132 runs (a bounded launch) over a grid of 144 tiles: it owns
    tiles 0 and 132 of the grouped order, and the ring's phases carry across them."""
    from argus.ir.schedule import tile_coords
    m, n, k = 128 * 12, 256 * 12, 64 * 6
    kernel = parse_kernel(EXAMPLES / "gemm.py", "gemm")
    rng = np.random.default_rng(21)
    a = round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((n, k)).astype(np.float32))
    result = interpret(kernel, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)},
                       seed=4, blocks=[0])
    assert result.ok, result.failures()
    out = result.outputs["C"]
    owned = np.zeros((m, n), bool)
    for t in (0, 132):
        tm, tn = tile_coords("grouped", 8, (12, 12), t)
        rows, cols = slice(tm * 128, tm * 128 + 128), slice(tn * 256, tn * 256 + 256)
        ref = a[rows] @ b[cols].T
        np.testing.assert_allclose(out[rows, cols], ref, rtol=2 ** -7,
                                   atol=2 ** -7 * np.abs(ref).max())
        owned[rows, cols] = True
    assert np.isnan(out[~owned]).all()  # the other blocks did not run
