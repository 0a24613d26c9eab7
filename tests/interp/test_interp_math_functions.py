"""The math functions (exp, log, log2, sqrt, rsqrt, tanh, erf, abs, sigmoid, silu, gelu in
both forms), row_min / row_max / row_sum of fragments of any layout, and integer
minimum / maximum / abs, in the interpreter's value and fragment-exact modes.

References are float64 formulas written here (the textbook forms, not the op table's), the
result rounded to fp32. Tolerance: 1 ulp of fp32 (rtol 2^-23) from that rounded reference,
since the interpreter rounds the float64 value once; plus an absolute 1e-15 for gelu, whose
textbook form x/2 (1 + erf(x / sqrt 2)) cancels in float64 itself for negative x. Both modes
must agree bit for bit (the exact mode computes the same semantics register by register)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from argus.frontend import parse_source
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16

HEADER = "from argus.lang import *\n"
UNARY = '''
@kernel(grid=(1,), block=128)
def k(X: Tensor[64, 64, DT], Y: Tensor[64, 64, DT]):
    x = load(tile(X, (64, 64), (0, 0)), "LAYOUT")
    store(tile(Y, (64, 64), (0, 0)), EXPR)
'''
LAYOUTS = ["blocked", "wgmma_acc_m64n64"]
_erf = np.vectorize(math.erf)
K = math.sqrt(2.0 / math.pi)

# name: (DSL expression of x, float64 reference, input domain)
FUNCTIONS = {
    "exp": ("exp(x)", np.exp, "any"),
    "log": ("log(x)", np.log, "positive"),
    "log2": ("log2(x)", np.log2, "positive"),
    "sqrt": ("sqrt(x)", np.sqrt, "positive"),
    "rsqrt": ("rsqrt(x)", lambda x: 1.0 / np.sqrt(x), "positive"),
    "tanh": ("tanh(x)", np.tanh, "any"),
    "erf": ("erf(x)", _erf, "any"),
    "abs": ("abs(x)", np.abs, "any"),
    "sigmoid": ("sigmoid(x)", lambda x: 1.0 / (1.0 + np.exp(-x)), "any"),
    "silu": ("silu(x)", lambda x: x * (1.0 / (1.0 + np.exp(-x))), "any"),
    "gelu": ("gelu(x)", lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))), "any"),
    "gelu_tanh": ('gelu(x, approximate="tanh")',
                  lambda x: 0.5 * x * (1.0 + np.tanh(K * (x + 0.044715 * x ** 3))), "any"),
}
ATOL = {"gelu": 1e-15, "gelu_tanh": 1e-15}


def inputs(domain: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((64, 64)) * 4.0).astype(np.float32)
    if domain == "positive":
        x = np.abs(x) + np.float32(1e-3)
        x[0, :8] = [0.0, 1.0, 2.0, 1e-30, 3e38, np.inf, np.nan, 1.0 + 2 ** -23]
    else:
        x[0, :12] = [0.0, -0.0, 1.0, -1.0, 30.0, -30.0, 100.0, -100.0, np.inf, -np.inf,
                     np.nan, 1e-20]
    return x


def run(expr: str, x: np.ndarray, layout: str, mode: str, dtype: str = "fp32") -> np.ndarray:
    src = UNARY.replace("EXPR", expr).replace("LAYOUT", layout).replace("DT", dtype)
    kernel = parse_source(HEADER + src, "math_kernel.py")["k"]
    out = interpret(kernel, {"X": x, "Y": np.full(x.shape, np.nan, np.float32)}, seed=0,
                    mode=mode)
    assert out.ok, out.failures()
    return out.outputs["Y"]


def reference(fn, x: np.ndarray) -> np.ndarray:
    """fn in float64, rounded to fp32 (overflowing to inf as fp32 does)."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(x.astype(np.float64)), dtype=np.float64).astype(np.float32)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_each_function_in_both_modes_against_float64(name, layout):
    expr, fn, domain = FUNCTIONS[name]
    x = inputs(domain)
    got = {mode: run(expr, x, layout, mode) for mode in ("value", "exact")}
    np.testing.assert_array_equal(got["value"], got["exact"])
    want = reference(fn, x)
    np.testing.assert_allclose(got["value"], want, rtol=2.0 ** -23, atol=ATOL.get(name, 0.0),
                               equal_nan=True, err_msg=name)


@pytest.mark.parametrize("name", ["exp", "tanh", "silu", "sigmoid", "sqrt"])
def test_a_bf16_fragment_is_computed_in_fp32_and_rounded_to_bf16(name):
    expr, fn, domain = FUNCTIONS[name]
    x = round_to_bf16(inputs(domain, seed=3))
    for mode in ("value", "exact"):
        got = run(expr, x, "blocked", mode, dtype="bf16")
        want = round_to_bf16(reference(fn, x))
        np.testing.assert_array_equal(got, want)


def test_special_values():
    x = np.zeros((64, 64), np.float32)
    x[0, :6] = [-np.inf, np.inf, np.nan, 0.0, -0.0, -200.0]
    cases = {"exp(x)": [0.0, np.inf, np.nan, 1.0, 1.0, 0.0],
             "sigmoid(x)": [0.0, 1.0, np.nan, 0.5, 0.5, 0.0],
             "tanh(x)": [-1.0, 1.0, np.nan, 0.0, -0.0, -1.0],
             "erf(x)": [-1.0, 1.0, np.nan, 0.0, -0.0, -1.0],
             "abs(x)": [np.inf, np.inf, np.nan, 0.0, 0.0, 200.0],
             "rsqrt(x)": [np.nan, 0.0, np.nan, np.inf, -np.inf, np.nan],
             "log(x)": [np.nan, np.inf, np.nan, -np.inf, -np.inf, np.nan],
             # x e^x at -inf is -inf * 0 (NaN), as on the device (argus_math.cuh)
             "silu(x)": [np.nan, np.inf, np.nan, 0.0, -0.0, -0.0],
             "gelu(x)": [np.nan, np.inf, np.nan, 0.0, -0.0, -0.0]}
    for expr, want in cases.items():
        for mode in ("value", "exact"):
            got = run(expr, x, "blocked", mode)[0, :6]
            np.testing.assert_array_equal(got, np.float32(want), err_msg=f"{expr} ({mode})")
            real = ~np.isnan(got)
            np.testing.assert_array_equal(np.signbit(got[real]),
                                          np.signbit(np.float32(want)[real]), err_msg=expr)


# -- row reductions of any 2-D fragment ---------------------------------------------------------
ROWS = '''
@kernel(grid=(1,), block=128)
def k(X: Tensor[64, 64, fp32], MX: Tensor[64, fp32], MN: Tensor[64, fp32],
      SM: Tensor[64, fp32], Y: Tensor[64, 64, fp32]):
    x = load(tile(X, (64, 64), (0, 0)), "LAYOUT")
    store(tile(MX, (64,), (0,)), row_max(x))
    store(tile(MN, (64,), (0,)), row_min(x))
    store(tile(SM, (64,), (0,)), row_sum(x))
    store(tile(Y, (64, 64), (0, 0)), exp(x - row_max(x)) / row_sum(exp(x - row_max(x))))
'''


@pytest.mark.parametrize("layout", ["blocked", "wgmma_acc_m64n64", "wgmma_acc_m64n32",
                                    "wgmma_a_rs_16bit", "ldmatrix_x4"])
def test_row_reductions_of_any_layout(layout):
    kernel = parse_source(HEADER + ROWS.replace("LAYOUT", layout), "rows.py")["k"]
    x = inputs("any", seed=5)[..., :64].copy()
    x[0, :12] = np.arange(12, dtype=np.float32)      # finite rows for the softmax
    outs = {}
    for mode in ("value", "exact"):
        names = ("MX", "MN", "SM")
        out = interpret(kernel, {"X": x, **{n: np.full(64, np.nan, np.float32) for n in names},
                                 "Y": np.full(x.shape, np.nan, np.float32)}, seed=1, mode=mode)
        assert out.ok, out.failures()
        outs[mode] = out.outputs
        np.testing.assert_array_equal(out.outputs["MX"], x.max(axis=1))
        np.testing.assert_array_equal(out.outputs["MN"], x.min(axis=1))
        x64 = x.astype(np.float64)
        np.testing.assert_allclose(out.outputs["SM"], x64.sum(axis=1),
                                   rtol=0, atol=1e-5 * np.abs(x64).sum(axis=1).max())
        e = np.exp(x64 - x64.max(axis=1, keepdims=True))
        np.testing.assert_allclose(out.outputs["Y"], e / e.sum(axis=1, keepdims=True),
                                   rtol=1e-6, atol=1e-7)
    for name in ("MX", "MN", "SM", "Y"):
        np.testing.assert_array_equal(outs["value"][name], outs["exact"][name])


# -- int32 fragments -----------------------------------------------------------------------------
INTS = '''
@kernel(grid=(1,), block=128)
def k(A: Tensor[64, 64, int32], B: Tensor[64, 64, int32], MX: Tensor[64, 64, int32],
      MN: Tensor[64, 64, int32], AB: Tensor[64, 64, int32], RMX: Tensor[64, int32],
      RMN: Tensor[64, int32], ROW: Tensor[64, 64, int32]):
    a = load(tile(A, (64, 64), (0, 0)), "LAYOUT")
    b = load(tile(B, (64, 64), (0, 0)), "LAYOUT")
    store(tile(MX, (64, 64), (0, 0)), maximum(a, b))
    store(tile(MN, (64, 64), (0, 0)), minimum(a, b))
    store(tile(AB, (64, 64), (0, 0)), abs(a - b))
    store(tile(RMX, (64,), (0,)), row_max(a))
    store(tile(RMN, (64,), (0,)), row_min(b))
    store(tile(ROW, (64, 64), (0, 0)), maximum(minimum(a, row_of(a) * 1000), -7))
'''


@pytest.mark.parametrize("layout", ["blocked", "wgmma_acc_m64n64"])
def test_integer_minimum_maximum_abs_and_row_reductions(layout):
    """Exact for |values| up to 2^24 (the interpreter holds registers, int32 too, in fp32,
    as the generated code does)."""
    kernel = parse_source(HEADER + INTS.replace("LAYOUT", layout), "ints.py")["k"]
    rng = np.random.default_rng(7)
    a = rng.integers(-2 ** 23, 2 ** 23, (64, 64), dtype=np.int32)
    b = rng.integers(-2 ** 23, 2 ** 23, (64, 64), dtype=np.int32)
    a[:, 0] = rng.integers(-100, 100, 64)
    for mode in ("value", "exact"):
        outs = {n: np.zeros((64, 64), np.int32) for n in ("MX", "MN", "AB", "ROW")}
        outs.update(RMX=np.zeros(64, np.int32), RMN=np.zeros(64, np.int32))
        out = interpret(kernel, {"A": a, "B": b, **outs}, seed=0, mode=mode)
        assert out.ok, out.failures()
        got = out.outputs
        np.testing.assert_array_equal(got["MX"], np.maximum(a, b))
        np.testing.assert_array_equal(got["MN"], np.minimum(a, b))
        np.testing.assert_array_equal(got["AB"], np.abs(a.astype(np.int64) - b))
        np.testing.assert_array_equal(got["RMX"], a.max(axis=1))
        np.testing.assert_array_equal(got["RMN"], b.min(axis=1))
        rows = np.arange(64)[:, None] * 1000
        np.testing.assert_array_equal(got["ROW"], np.maximum(np.minimum(a, rows), -7))
