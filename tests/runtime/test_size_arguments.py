"""Size parameters (`R: Dim`): a shape symbol given as an int launch argument, in its place
among the tensors. Parsed into the IR (Kernel.arguments, printed and read back), bound by
arguments.py (a positive int, agreeing with a tensor dim of the same symbol, each refusal a
LaunchError saying what to pass) and run by the interpreter's launcher."""

import importlib.util

import numpy as np
import pytest

from argus.frontend import parse_source
from argus.ir import check_kernel, format_kernel
from argus.ir.reader import read_kernel
from argus.runtime.arguments import SizeParam, bind_arguments, launch_params
from argus.runtime.interpreted import InterpretedLauncher
from argus.runtime.launch_errors import LaunchError

KERNEL = '''from argus.lang import Dim, Tensor, assume, block_id, const, fp32, kernel, load, store, tile


@kernel(grid=("R // BM", "N // BN"), block=128)
def head(X: Tensor["M", "N", fp32], R: Dim, Y: Tensor["M", "N", fp32], BM: const = 32,
         BN: const = 8):
    assume(R % BM == 0)
    assume(N % BN == 0)
    assume(R <= M)
    src = tile(X, (BM, BN), (block_id("x"), block_id("y")))
    store(tile(Y, (BM, BN), (block_id("x"), block_id("y"))), load(src, "blocked") * 2.0)
'''


@pytest.fixture
def head():
    return parse_source(KERNEL, "head.py")["head"]


def test_a_size_parameter_is_a_symbol_and_an_argument_in_its_place(head):
    assert [s.name for s in head.symbols] == ["M", "N", "R"]
    assert head.arguments == ("X", "R", "Y")
    assert head.size_params == ("R",)
    assert [p.name for p in head.params] == ["X", "Y"]     # tensors only
    assert [type(p) for p in launch_params(head)][1] is SizeParam


def test_the_ir_round_trip_keeps_the_argument_order(head):
    text = format_kernel(head)
    assert "  arguments %X, %R, %Y" in text
    again = read_kernel(text)
    check_kernel(again)
    assert again.arguments == ("X", "R", "Y") and format_kernel(again) == text


def test_reading_an_unknown_argument_is_refused():
    text = ("kernel @k() {\n  arguments %Z\n  launch grid=(1) block=128 cluster=(1, 1, 1)\n"
            "}\n")
    with pytest.raises(ValueError, match="%Z is neither a parameter nor a symbol"):
        read_kernel(text)


def test_a_size_parameter_takes_no_default():
    src = KERNEL.replace("BN: const = 8", "BN: const = 8, R: Dim = 64").replace("R: Dim,", "")
    with pytest.raises(Exception, match="size R is given at launch and takes no default"):
        parse_source(src, "head.py")


def test_bind_reads_the_size_from_the_int(head):
    x, y = np.zeros((64, 8), np.float32), np.zeros((64, 8), np.float32)
    bound, sizes = bind_arguments("head", launch_params(head), (x, 32, y), allow_numpy=True)
    assert set(bound) == {"X", "Y"} and sizes == {"M": 64, "N": 8, "R": 32}
    _, sizes = bind_arguments("head", launch_params(head), (x, np.int64(32), y),
                              allow_numpy=True)
    assert sizes["R"] == 32


@pytest.mark.parametrize("given, message", [
    (0, "size R must be a positive int, got 0"),
    (-32, "size R must be a positive int, got -32"),
    (32.0, "size R must be a Python int, got float"),
    (True, "size R must be a Python int, got bool"),
    (np.zeros(32, np.int32), "size R must be a Python int, got ndarray"),
])
def test_bind_refuses_what_is_not_a_positive_int(head, given, message):
    x, y = np.zeros((64, 8), np.float32), np.zeros((64, 8), np.float32)
    with pytest.raises(LaunchError, match=message):
        bind_arguments("head", launch_params(head), (x, given, y), allow_numpy=True)


def test_bind_counts_the_sizes_among_the_arguments(head):
    x = np.zeros((64, 8), np.float32)
    with pytest.raises(LaunchError, match=r"takes 3 arguments \(X, R, Y\), got 2"):
        bind_arguments("head", launch_params(head), (x, x), allow_numpy=True)


def test_a_size_that_names_a_tensor_dim_must_agree():
    src = KERNEL.replace("R: Dim,", "N: Dim,").replace('"R // BM"', '"M // BM"') \
        .replace("assume(R % BM == 0)", "assume(M % BM == 0)").replace("    assume(R <= M)\n", "")
    k = parse_source(src, "head.py")["head"]
    x = np.zeros((64, 8), np.float32)
    bind_arguments("head", launch_params(k), (x, 8, x), allow_numpy=True)
    with pytest.raises(LaunchError, match="size N is 16, but a tensor has N = 8"):
        bind_arguments("head", launch_params(k), (x, 16, x), allow_numpy=True)


def test_the_interpreter_runs_a_kernel_with_a_size_argument(head):
    x = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)
    y = np.full((64, 8), -1.0, np.float32)
    InterpretedLauncher(head)(x, 32, y)
    assert np.array_equal(y[:32], 2 * x[:32])       # the first R rows
    assert (y[32:] == -1.0).all()                    # the rest untouched
