"""A DSL kernel called from Python (argus.runtime.jit through KernelDef.__call__), on the CPU
interpreter (ARGUS_INTERPRET=1): examples/copy.py and examples/gemm.py against torch/NumPy
references with poisoned outputs, the grid given by `kern[grid]`, constants as keywords,
the per-process cache, and a sentence for each bad call."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from argus.runtime import jit  # noqa: E402
from argus.runtime.launch_errors import KernelFailed, LaunchError  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example(name):
    """An example file of the project (trusted code, so imported as a module)."""
    spec = importlib.util.spec_from_file_location(f"argus_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def copy_kernel():
    return example("copy").copy


@pytest.fixture(scope="module")
def gemm_module():
    return example("gemm")


@pytest.fixture(autouse=True)
def interpret(monkeypatch):
    monkeypatch.setenv("ARGUS_INTERPRET", "1")


def poisoned(*shape, dtype=torch.float32):
    return torch.full(shape, float("nan"), dtype=dtype)


def test_copy_on_torch_tensors_writes_the_output_in_place(copy_kernel):
    x = torch.randn(128, 192)
    y = poisoned(128, 192)
    copy_kernel(x, y)
    assert torch.equal(y, x)


def test_copy_on_numpy_arrays_with_a_constant_given_by_keyword(copy_kernel):
    x = np.random.default_rng(1).standard_normal((64, 96)).astype(np.float32)
    y = np.full_like(x, np.nan)
    copy_kernel(x, y, BN=32)          # 96 is not a multiple of the default BN = 64
    np.testing.assert_array_equal(y, x)


def test_the_grid_given_by_subscript_bounds_the_blocks_that_run(copy_kernel):
    x = torch.randn(128, 128)
    y = poisoned(128, 128)
    copy_kernel[(1, 2)](x, y)         # blocks (0, 0) and (0, 1): the top 64 rows only
    assert torch.equal(y[:64], x[:64])
    assert torch.isnan(y[64:]).all()


def test_a_grid_function_gets_the_sizes_and_constants(copy_kernel):
    seen = {}

    def grid(meta):
        seen.update(meta)
        return (meta["M"] // meta["BM"], 1)

    x = torch.randn(128, 128)
    y = poisoned(128, 128)
    copy_kernel[grid](x, y)
    assert (seen["M"], seen["N"], seen["BM"]) == (128, 128, 64)
    assert torch.equal(y[:, :64], x[:, :64]) and torch.isnan(y[:, 64:]).all()


def test_gemm_example_matches_an_fp64_reference(gemm_module):
    dtype = torch.bfloat16
    g = torch.Generator().manual_seed(3)
    a = torch.randn(128, 128, generator=g).to(dtype)
    b = torch.randn(256, 128, generator=g).to(dtype)
    c = poisoned(128, 256, dtype=dtype)
    gemm_module.gemm(a, b, c)
    want = torch.from_numpy(gemm_module.reference(a.float().numpy(), b.float().numpy()))
    exact = a.double() @ b.double().T
    assert not torch.isnan(c).any()
    # the kernel's one rounding to bf16 of an fp32 sum: within half a bf16 ulp of the result
    assert torch.allclose(c.double(), exact, rtol=2 ** -8, atol=1e-2)
    assert torch.allclose(c.float(), want.float(), rtol=2 ** -8, atol=1e-2)


def test_inputs_are_not_written_back_and_stay_untouched(copy_kernel):
    x = torch.randn(64, 64)
    before = x.clone()
    copy_kernel(x, poisoned(64, 64))
    assert torch.equal(x, before)


def test_a_second_call_reuses_the_built_kernel(copy_kernel, monkeypatch):
    calls = []
    real = jit._parse
    monkeypatch.setattr(jit, "_parse", lambda k, c: calls.append(c) or real(k, c))
    x = torch.randn(64, 64)
    copy_kernel(x, poisoned(64, 64), BM=32)
    copy_kernel(x, poisoned(64, 64), BM=32)
    assert jit.launcher_for(copy_kernel, {"BM": 32}) is jit.launcher_for(copy_kernel, {"BM": 32})
    assert [c for c in calls if c] == [{"BM": 32}]    # specialised once, on the first call


@pytest.mark.parametrize("args, message", [
    ((torch.zeros(64, 64),), r"copy takes 2 tensors \(X, Y\), got 1"),
    ((torch.zeros(64, 64, dtype=torch.float64), torch.zeros(64, 64)),
     "X must be fp32, got torch.float64"),
    ((torch.zeros(64, 64), torch.zeros(64, 64, 1)), "Y must be 2-D"),
    ((torch.zeros(64, 64), torch.zeros(64, 128)), "dimension 1 is N = 128, but another"),
    ((torch.zeros(64, 128).t(), torch.zeros(128, 64)), "X must be contiguous row-major"),
    ((torch.zeros(64, 64), [[0.0]]), "Y must be a torch tensor or a DLPack array"),
    ((np.zeros((64, 64), np.float64), np.zeros((64, 64), np.float32)),
     "X must be fp32, got float64"),
])
def test_bad_calls_are_refused_with_what_to_change(copy_kernel, args, message):
    with pytest.raises(LaunchError, match=message):
        copy_kernel(*args)


def test_an_unknown_constant_is_refused_with_the_known_ones(copy_kernel):
    with pytest.raises(LaunchError, match="no constant 'BX'; its constants are BM, BN"):
        copy_kernel(torch.zeros(64, 64), torch.zeros(64, 64), BX=8)


@pytest.mark.parametrize("grid", [(0,), (1, 1, 1, 1), "4", (1.5,)])
def test_a_bad_grid_is_refused(copy_kernel, grid):
    with pytest.raises(LaunchError, match="grid must be a positive int or a tuple"):
        copy_kernel[grid](torch.zeros(64, 64), torch.zeros(64, 64))


def test_a_broken_assumption_names_the_kernel_line(copy_kernel):
    y = poisoned(100, 64)
    with pytest.raises(KernelFailed, match=r"copy.py:11:.*assumption does not hold"):
        copy_kernel(torch.zeros(100, 64), y)
    assert torch.isnan(y).all()          # nothing copied back from a failed run


def test_without_the_interpreter_a_machine_without_a_gpu_says_how_to_run(copy_kernel,
                                                                         monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the GPU path is tested on the device")
    monkeypatch.setenv("ARGUS_INTERPRET", "0")
    monkeypatch.setattr("argus.runtime.compiled.build_launcher",
                        lambda ir, debug: jit_gpu_launcher(ir))
    with pytest.raises(LaunchError, match="no CUDA GPU is visible.*ARGUS_INTERPRET=1"):
        copy_kernel(torch.zeros(64, 64), torch.zeros(64, 64), BM=16)


def jit_gpu_launcher(ir):
    """The GPU launcher without its cubin build (no CUDA toolchain needed to reach the
    device check, which the first launch makes)."""
    from argus.codegen import generate
    from argus.runtime.launch import Launcher
    return Launcher(generate(ir), b"", ir)


def test_an_unknown_interpret_mode_is_refused(copy_kernel, monkeypatch):
    monkeypatch.setenv("ARGUS_INTERPRET", "fast")
    with pytest.raises(LaunchError, match="ARGUS_INTERPRET='fast': use 1"):
        copy_kernel(torch.zeros(64, 64), torch.zeros(64, 64))


def test_the_fragment_exact_mode_runs_the_same_call(copy_kernel, monkeypatch):
    monkeypatch.setenv("ARGUS_INTERPRET", "exact")
    x = torch.randn(64, 64)
    y = poisoned(64, 64)
    copy_kernel(x, y)
    assert torch.equal(y, x)
    assert jit.launcher_for(copy_kernel, {}).mode == "exact"
