"""The elementwise math of the op table is one definition every stage reads: each math op
with a C template has NumPy semantics and the reverse, every `argus::NAME(` a template (or a
row reduction's combine) calls is a wrapper of argus_math.cuh, and the DSL surface declares
each op (neg is Python's unary minus, gelu_tanh is gelu(x, approximate="tanh"))."""

import re

import numpy as np
import pytest

import argus.lang as lang
from argus.codegen import kernel as codegen_kernel
from argus.ir import OPS
from argus.ir.ops.math import BINARY, INTEGER, REDUCTIONS, UNARY
from argus.runtime.toolchain import ARGUS_HEADER_DIR

HEADER = ARGUS_HEADER_DIR / "argus_math.cuh"
ELEMENTWISE = [s for s in OPS.values() if s.opcode.startswith("math.")
               and (s.semantics is not None or s.cuda is not None)]
NOT_SURFACE = {"neg": "Python's unary minus", "gelu_tanh": 'gelu(x, approximate="tanh")'}
# Python operators, not surface functions
OPERATORS = {"add", "sub", "mul", "div", "max", "min"}


def wrappers() -> dict[str, str]:
    """{name: its /// doc comment} of every function argus_math.cuh defines in namespace argus."""
    text = HEADER.read_text()
    out = {}
    for m in re.finditer(r"((?:^[ \t]*///[^\n]*\n)*)^[ \t]*__device__ __forceinline__ [\w:<> ]+?"
                         r"\b(\w+)\(", text, re.M):
        out.setdefault(m.group(2), "")
        out[m.group(2)] += m.group(1)
    return out


def called(template: str) -> set[str]:
    return set(re.findall(r"argus::(\w+)\(", template))


def test_the_math_ops_are_the_tables():
    assert {s.opcode for s in ELEMENTWISE} == {f"math.{n}" for n in (*BINARY, *UNARY)}
    assert len(ELEMENTWISE) >= 20


@pytest.mark.parametrize("spec", ELEMENTWISE, ids=lambda s: s.opcode)
def test_every_elementwise_op_has_semantics_and_a_template(spec):
    assert callable(spec.semantics), spec.opcode
    assert spec.cuda, spec.opcode
    names = set(re.findall(r"\{(\w+)\}", spec.cuda))
    assert names == {o.name for o in spec.operands}, \
        f"{spec.opcode}: the template {spec.cuda!r} must use each operand once by name"
    spec.cuda.format(**{o.name: "v" for o in spec.operands})   # a well-formed template


def test_the_header_is_included_by_generated_kernels():
    assert HEADER.name in codegen_kernel.HEADERS


@pytest.mark.parametrize("template", [s.cuda for s in ELEMENTWISE] +
                         [c for _, c in REDUCTIONS.values()])
def test_every_called_wrapper_is_defined_in_the_header(template):
    defined = wrappers()
    missing = called(template) - set(defined)
    assert not missing, f"{template!r} calls argus::{sorted(missing)} that argus_math.cuh " \
                        f"does not define (it defines {sorted(defined)})"


def test_every_transcendental_wrapper_states_its_error_in_ulp():
    docs = wrappers()
    exact = {"abs", "neg"}
    for name in set(UNARY) - exact:
        for fn in called(OPS[f"math.{name}"].cuda):
            assert "ulp" in docs[fn], f"argus::{fn} (math.{name}) states no error bound in ulp"


def test_every_unary_op_is_a_surface_function_or_says_what_it_is():
    surface = lang.surface_functions()
    for name in UNARY:
        assert (name in surface) != (name in NOT_SURFACE), name
    for name in BINARY:
        assert name in OPERATORS or name in surface, name
    for kind in REDUCTIONS:
        assert f"row_{kind}" in surface, kind


@pytest.mark.parametrize("spec", ELEMENTWISE, ids=lambda s: s.opcode)
def test_semantics_on_fp32_arrays_and_python_numbers(spec):
    x = np.linspace(0.25, 3.0, 12, dtype=np.float32).reshape(3, 4)
    args = [x] * len(spec.operands)
    with np.errstate(all="ignore"):
        out = np.asarray(spec.semantics(*args))
        one = spec.semantics(*[np.float32(1.5)] * len(spec.operands))
    assert out.shape == x.shape and out.dtype == np.float32, spec.opcode
    assert np.ndim(one) == 0 and np.isfinite(float(one)), spec.opcode
    np.testing.assert_array_equal(out[1, 1], spec.semantics(*[x[1, 1]] * len(spec.operands)))


@pytest.mark.parametrize("name", sorted(INTEGER))
def test_integer_ops_are_exact_on_integers(name):
    spec = OPS[f"math.{name}"]
    assert spec.integer
    a = np.array([-7, -1, 0, 3, 2 ** 20], dtype=np.int64)
    b = np.array([2, -5, 0, 3, -(2 ** 20)], dtype=np.int64)
    out = spec.semantics(a, b) if len(spec.operands) == 2 else spec.semantics(a)
    assert np.asarray(out).dtype.kind == "i", name
    ref = {"add": a + b, "sub": a - b, "mul": a * b, "max": np.maximum(a, b),
           "min": np.minimum(a, b), "neg": -a, "abs": np.abs(a)}[name]
    np.testing.assert_array_equal(out, ref)


def test_only_the_integer_ops_are_marked_integer():
    assert {s.opcode[5:] for s in ELEMENTWISE if s.integer} == INTEGER
    assert "div" not in INTEGER and "exp" not in INTEGER


@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
def test_row_reductions_reduce_the_last_axis(kind):
    fn, combine = REDUCTIONS[kind]
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.0
    ref = {"max": x.max(axis=1), "min": x.min(axis=1), "sum": x.sum(axis=1)}[kind]
    np.testing.assert_array_equal(fn(x), ref)
    assert set(re.findall(r"\{(\w+)\}", combine)) == {"lhs", "rhs"}
    assert kind in OPS["reduce.row"].doc
