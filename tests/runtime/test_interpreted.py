"""The interpreter's launcher (argus/runtime/interpreted.py) on NumPy arrays alone (no torch
needed): outputs written back in place, inputs left alone, a failed run copying nothing, a
DSL error reported at the kernel's line, and a kernel called without torch installed."""

import importlib.util
import sys

import numpy as np
import pytest

from argus.frontend import DSLError
from argus.runtime.interpreted import InterpretedLauncher
from argus.runtime.launch_errors import KernelFailed, LaunchError

KERNEL = '''from argus.lang import Tensor, assume, block_id, const, fp32, kernel, load, store, tile


@kernel(grid=("M // BM", "N // BN"), block=128)
def twice(X: Tensor["M", "N", fp32], Y: Tensor["M", "N", fp32], BM: const = 32, BN: const = 8):
    assume(M % BM == 0)
    src = tile(X, (BM, BN), (block_id("x"), block_id("y")))
    store(tile(Y, (BM, BN), (block_id("x"), block_id("y"))), load(src, "blocked") * 2.0)
'''


def load_module(tmp_path, text, name):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def twice(tmp_path, monkeypatch):
    monkeypatch.setenv("ARGUS_INTERPRET", "1")
    return load_module(tmp_path, KERNEL, "twice_kernel").twice


def test_numpy_outputs_are_written_in_place_and_inputs_kept(twice):
    x = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)
    y = np.full_like(x, np.nan)
    twice(x, y)
    np.testing.assert_array_equal(y, 2 * x)
    np.testing.assert_array_equal(x, np.arange(64 * 16, dtype=np.float32).reshape(64, 16))


def test_a_failed_run_copies_nothing_back(twice):
    y = np.full((48, 16), np.nan, np.float32)
    with pytest.raises(KernelFailed, match=r"twice_kernel.py:6:.*assumption does not hold"):
        twice(np.ones((48, 16), np.float32), y)
    assert np.isnan(y).all()


def test_a_dsl_error_names_the_kernel_line(tmp_path, monkeypatch):
    monkeypatch.setenv("ARGUS_INTERPRET", "1")
    bad = KERNEL.replace('load(src, "blocked") * 2.0', 'load(src, "blocked") * undefined_name')
    k = load_module(tmp_path, bad, "bad_kernel").twice
    with pytest.raises(DSLError, match=r"bad_kernel.py:8:\d+: error: .*undefined_name"):
        k(np.zeros((32, 16), np.float32), np.zeros((32, 16), np.float32))


def test_the_launcher_checks_before_it_runs():
    from argus.frontend import parse_source

    ir = parse_source(KERNEL, "k.py")["twice"]
    with pytest.raises(LaunchError, match="twice takes 2 tensors"):
        InterpretedLauncher(ir)(np.zeros((32, 16), np.float32))


def test_a_kernel_call_needs_no_torch(twice, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)      # import torch now fails
    x = np.ones((32, 8), np.float32)
    y = np.zeros_like(x)
    twice(x, y, BM=16)
    np.testing.assert_array_equal(y, 2 * x)
