"""`argus run --interpret`: fresh inputs, NaN-poisoned outputs, compared with the file's
reference; a wrong kernel and an unwritten output both fail with exit 1."""

from pathlib import Path

import pytest

from argus.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
COPY = f"{EXAMPLES / 'copy.py'}::copy"

# The example copy kernel with one mistake spliced in as {src}: which tile it reads.
COPY_VARIANT = '''\
import numpy as np

from argus.lang import Tensor, assume, block_id, const, fp32, kernel, load, store, tile


@kernel(grid=("M // BM", "N // BN"), block=128)
def copy(X: Tensor["M", "N", fp32], Y: Tensor["M", "N", fp32], BM: const = 64, BN: const = 64):
    assume(M % BM == 0)
    assume(N % BN == 0)
    tm = block_id("x")
    tn = block_id("y")
    x = load(tile(X, (BM, BN), {src}), "blocked")
    store(tile(Y, (BM, BN), (tm, tn)), x)


def reference(X):
    return np.array(X, copy=True)
'''

# Initialised for two arrivals, one comes: the wait never returns.
DEADLOCK = '''\
import numpy as np

from argus.lang import (Tensor, arrive, elect_one, fence_mbarrier_init, fp32, kernel, load,
                        mbarrier, mbarrier_init, store, sync_block, tile, wait)


@kernel(grid=(1,), block=128)
def stuck(X: Tensor[64, 64, fp32], Y: Tensor[64, 64, fp32]):
    bar = mbarrier(1)
    with elect_one("block"):
        mbarrier_init(bar[0], 2)
    fence_mbarrier_init()
    sync_block()
    with elect_one("block"):
        arrive(bar[0])
    wait(bar[0], 0)
    x = load(tile(X, (64, 64), (0, 0)), "blocked")
    store(tile(Y, (64, 64), (0, 0)), x)


def reference(X):
    return np.array(X, copy=True)
'''


def _variant(tmp_path, src):
    path = tmp_path / "copy_variant.py"
    path.write_text(COPY_VARIANT.format(src=src))
    return f"{path}::copy"


def test_copy_example_passes(capsys):
    assert main(["run", COPY, "--interpret", "--shape", "M=64,N=128", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "M=64,N=128" in out and out.strip().endswith("PASS")


def test_the_variant_template_itself_is_correct(tmp_path, capsys):
    """So the failures below come from the one spliced mistake, not from the template."""
    assert main(["run", _variant(tmp_path, "(tm, tn)"), "--interpret",
                 "--shape", "M=128,N=128"]) == 0


def test_copy_reading_the_wrong_tile_fails(tmp_path, capsys):
    assert main(["run", _variant(tmp_path, "(tn, tm)"), "--interpret",
                 "--shape", "M=128,N=128"]) == 1
    out = capsys.readouterr().out
    assert out.strip().endswith("FAIL") and "elements off" in out


def test_gemm_example_passes_with_bf16_tolerance(capsys):
    assert main(["run", f"{EXAMPLES / 'gemm.py'}::gemm", "--interpret"]) == 0
    assert "C (bf16)" in capsys.readouterr().out


def test_unwritten_output_stays_nan_and_fails(tmp_path, capsys):
    """Blocks 2i and 2i+1 along x both store to row-tile 2i: the odd row-tiles of Y keep
    their NaN poison."""
    path = tmp_path / "half.py"
    path.write_text(COPY_VARIANT.format(src="(tm, tn)").replace(
        '    store(tile(Y, (BM, BN), (tm, tn)), x)',
        '    store(tile(Y, (BM, BN), ((tm // 2) * 2, tn)), x)'))
    assert main(["run", f"{path}::copy", "--interpret", "--shape", "M=128,N=64"]) == 1
    out = capsys.readouterr().out
    assert "NaN" in out and out.strip().endswith("FAIL")


def test_without_interpret_runs_on_the_gpu_or_says_there_is_none(capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the GPU path runs (tests/ops covers it)")
    assert main(["run", COPY]) == 2
    assert "no CUDA GPU here; add --interpret" in capsys.readouterr().err


@pytest.mark.parametrize("argv, hint", [
    ([f"{EXAMPLES / 'copy.py'}::nope"], "kernels defined there: copy"),
    ([f"{EXAMPLES / 'copy.py'}"], "FILE.py::KERNEL"),
    ([COPY, "--shape", "Q=64"], "does not use"),
    ([COPY, "--shape", "M"], "is not SYM=N"),
])
def test_usage_errors_exit_2_with_a_hint(argv, hint, capsys):
    assert main(["run", "--interpret", *argv]) == 2
    err = capsys.readouterr().err
    assert hint in err and "Traceback" not in err


def test_missing_reference_exits_2(tmp_path, capsys):
    path = tmp_path / "noref.py"
    path.write_text(COPY_VARIANT.format(src="(tm, tn)").split("def reference")[0])
    assert main(["run", f"{path}::copy", "--interpret", "--shape", "M=64,N=64"]) == 2
    assert "defines no reference" in capsys.readouterr().err


def test_deadlock_is_a_failure_with_the_waiting_agent_named(tmp_path, capsys):
    path = tmp_path / "stuck.py"
    path.write_text(DEADLOCK)
    assert main(["run", f"{path}::stuck", "--interpret"]) == 1
    out = capsys.readouterr().out
    assert "deadlock" in out and "bar[0]" in out and "PASS" not in out


@pytest.mark.parametrize("target,extra", [
    ("copy.py::copy", []),
    ("gemm.py::gemm", []),
    ("flash_attention.py::flash_fwd", ["--shape", "T=128"]),
])
def test_examples_pass_in_exact_mode(target, extra, capsys):
    assert main(["run", str(EXAMPLES / target), "--interpret", "--exact", *extra]) == 0
    out = capsys.readouterr().out
    assert "(fragment-exact)" in out and out.strip().endswith("PASS")


def test_exact_mode_fails_a_wrong_kernel_too(tmp_path, capsys):
    assert main(["run", _variant(tmp_path, "(tn, tm)"), "--interpret", "--exact",
                 "--shape", "M=128,N=64"]) == 1
    assert capsys.readouterr().out.strip().endswith("FAIL")
