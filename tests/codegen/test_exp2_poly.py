"""exp2(x, poly_every=n): the op keeps one attribute, which the code generator reads to send
one register in n of each thread's fragment to argus::exp2_poly (the FP32 units) and the
rest to MUFU.EX2; the IR prints and reads it back; the interpreter computes the same 2^x
either way. The polynomial itself: argus_math.cuh's algorithm re-run in NumPy with the
header's own coefficients (parsed from it), fp32 rounding step by step, against float64
2^x over a sample of every binade, and on the special values."""

from __future__ import annotations

import re

import numpy as np
import pytest

from argus.codegen import generate
from argus.codegen.errors import CodegenError
from argus.frontend import parse_source
from argus.ir.printer import format_kernel
from argus.ir.reader import read_kernel
from argus.runtime.toolchain import ARGUS_HEADER_DIR

SRC = '''from argus.lang import *


@kernel(grid=(1,), block=128)
def softmaxish(A: Tensor[64, 64, "fp32"], C: Tensor[64, 64, "fp32"]):
    a = load(tile(A, (64, 64), (0, 0)), layout="wgmma_acc_m64n64")
    store(tile(C, (64, 64), (0, 0)), exp2(a, poly_every=EVERY))
'''


def _kernel(every: int):
    return parse_source(SRC.replace("EVERY", str(every)), "softmaxish.py")["softmaxish"]


def test_the_attribute_is_kept_and_reads_back():
    kernel = _kernel(4)
    text = format_kernel(kernel)
    assert "math.exp2" in text and "poly_every=4" in text
    assert format_kernel(read_kernel(text)) == text


def test_zero_is_plain_exp2():
    text = format_kernel(_kernel(0))
    assert "math.exp2" in text and "poly_every" not in text
    assert "exp2_poly" not in generate(_kernel(0)).source


@pytest.mark.parametrize("every", [1, 3, 4])
def test_one_register_in_n_goes_to_the_polynomial(every):
    code = generate(_kernel(every)).source
    line = next(l for l in code.splitlines() if "exp2_poly" in l)
    m = re.search(r"\(\(argus_v\) % (\d+) == (\d+) \? argus::exp2_poly\((.+?)\) : "
                  r"argus::exp2\((.+?)\)\)", line)
    assert m, line
    assert (int(m.group(1)), int(m.group(2))) == (every, every - 1)
    assert m.group(3) == m.group(4)                  # the same operand on both sides
    assert "#pragma unroll" in code                   # argus_v is constant: chosen at compile time


def test_a_negative_or_runtime_count_is_an_error_at_its_line():
    from argus.frontend.errors import DSLError
    with pytest.raises(DSLError) as err:
        _kernel(-1)
    assert "softmaxish.py:7" in str(err.value) and "poly_every" in str(err.value)
    assert "poly_every=4" in str(err.value)            # the hint says what to write
    bad = SRC.replace("poly_every=EVERY", "poly_every=block_id(\"x\")")
    with pytest.raises(DSLError) as err:
        parse_source(bad, "softmaxish.py")
    assert "compile-time integer" in str(err.value)


def test_an_attribute_on_another_op_is_refused_by_the_generator():
    kernel = _kernel(2)
    op = next(o for o in kernel.walk() if o.opcode == "math.exp2")
    op.opcode = "math.exp"
    with pytest.raises(CodegenError, match="only exp2 take"):
        generate(kernel)


def test_the_interpreter_computes_2_to_the_x_either_way():
    from argus.interp import interpret
    rng = np.random.default_rng(7)
    a = rng.uniform(-20, 5, (64, 64)).astype(np.float32)
    outs = []
    for every in (0, 3):
        c = np.full((64, 64), np.nan, np.float32)
        result = interpret(_kernel(every), {"A": a, "C": c})
        assert result.ok, result.failures()
        outs.append(result.outputs["C"])
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_allclose(outs[0], np.exp2(a.astype(np.float64)), rtol=1e-6)


# -- the polynomial, as argus_math.cuh computes it --------------------------------------

def _header_function() -> str:
    text = (ARGUS_HEADER_DIR / "argus_math.cuh").read_text()
    return text[text.index("float exp2_poly(float x)"):text.index("/// x / y, IEEE")]


def _coefficients() -> list[np.float32]:
    """c5 .. c0 in Horner order, as the header writes them."""
    body = _header_function()
    first = re.search(r"fmaf\(([-\d.e]+)f, f, ([-\d.e]+)f\)", body)
    rest = re.findall(r"p = fmaf\(p, f, ([-\d.e]+)f\)", body)
    return [np.float32(first.group(1)), np.float32(first.group(2)), *map(np.float32, rest)]


def exp2_poly(x: np.ndarray) -> np.ndarray:
    """The header's steps in fp32: clamp (NaN kept), t = c + grid rounded down, f = c - (t -
    grid), Horner with one rounding an fma, times the float whose bits are t << 23."""
    assert "12583039.0f" in _header_function() and "__fadd_rd" in _header_function()
    coef = _coefficients()
    assert len(coef) == 6 and coef[-1] == 1.0
    x = np.asarray(x, np.float32)
    with np.errstate(all="ignore"):
        c = np.where(np.isnan(x), x, np.clip(x, np.float32(-127), np.float32(128)))
        grid = np.float32(12583039.0)
        t = np.where(np.isnan(c), np.float32(np.nan),
                     (np.floor(c.astype(np.float64)) + 12583039.0).astype(np.float32))
        f = (c - (t - grid).astype(np.float32)).astype(np.float32)
        p = np.full_like(f, coef[0])
        for k in coef[1:]:
            p = (p.astype(np.float64) * f + k).astype(np.float32)
        scale = ((t.view(np.int32).astype(np.int64) << 23) & 0xFFFFFFFF).astype(
            np.uint32).view(np.float32)
        return (p * scale).astype(np.float32)


def stated_bound() -> float:
    doc = (ARGUS_HEADER_DIR / "argus_math.cuh").read_text()
    doc = doc[doc.index("/// 2^x on the FMA pipe"):doc.index("float exp2_poly(")]
    return float(re.search(r"at most ([\d.]+) ulp", doc).group(1))


def test_the_polynomial_is_within_its_stated_bound():
    rng = np.random.default_rng(2024)
    # every binade of [-127, 128] sampled, the integers and the values next to them
    bits = rng.integers(0, 0x43000000, 4_000_000, dtype=np.int64)
    xs = np.concatenate([bits.astype(np.uint32).view(np.float32),
                         (bits[:2_000_000] | 0x80000000).astype(np.uint32).view(np.float32),
                         np.arange(-126, 128, dtype=np.float32),
                         np.nextafter(np.arange(-126, 128, dtype=np.float32), np.float32(200)),
                         np.nextafter(np.arange(-126, 128, dtype=np.float32), np.float32(-200))])
    xs = xs[(xs >= -126) & (xs < 128)]
    ref = np.exp2(xs.astype(np.float64))
    ulp = np.spacing(ref.astype(np.float32)).astype(np.float64)
    err = np.abs(exp2_poly(xs).astype(np.float64) - ref) / ulp
    assert err.max() <= stated_bound(), (err.max(), xs[err.argmax()])


def test_special_values():
    x = np.array([-np.inf, np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, 3.0, -126.0, -126.5, -127.0,
                  -1000.0, 128.0, 1000.0, np.nextafter(np.float32(128), np.float32(0))],
                 np.float32)
    got = exp2_poly(x)
    assert got[0] == 0.0 and got[1] == np.inf and np.isnan(got[2])
    assert list(got[3:8]) == [1.0, 1.0, 2.0, 0.5, 8.0]          # integers exact
    assert got[8] == np.float32(2.0 ** -126)                     # the smallest normal
    assert list(got[9:12]) == [0.0, 0.0, 0.0]                     # below it: 0, as .ftz
    assert got[12] == np.inf and got[13] == np.inf
    assert np.isfinite(got[14])                                  # just below 128: finite
