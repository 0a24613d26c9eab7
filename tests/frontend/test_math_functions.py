"""The math functions of the DSL -> IR: each one parses to its op-table opcode keeping the
operand's type, gelu's two forms, row_min, compile-time folding through the table's
semantics, and type errors at file:line."""

import pytest

from argus.ir.ops.math import UNARY
import argus.lang as lang

FRAG = "frag<fp32>[64, 64, layout=blocked]"
CALLS = {"exp": "exp(x)", "log": "log(x)", "log2": "log2(x)", "sqrt": "sqrt(x)",
         "rsqrt": "rsqrt(x)", "tanh": "tanh(x)", "erf": "erf(x)", "abs": "abs(x)",
         "sigmoid": "sigmoid(x)", "silu": "silu(x)", "gelu": "gelu(x)",
         "gelu_tanh": 'gelu(x, approximate="tanh")', "exp2": "exp2(x)"}


def test_every_unary_op_but_neg_has_a_call_here():
    assert set(CALLS) == set(UNARY) - {"neg"}


@pytest.mark.parametrize("op", sorted(CALLS))
def test_each_function_parses_to_its_opcode(body_ops, op):
    ops = body_ops(f"""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        y = {CALLS[op]}
    """)
    assert ops[-1] == f"%y = math.{op} %x : {FRAG}"


@pytest.mark.parametrize("op", ["exp", "silu", "gelu_tanh", "abs"])
def test_the_result_keeps_the_operands_dtype_and_layout(body_ops, op):
    ops = body_ops(f"""
        x = load(tile(A, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        y = {CALLS[op]}
    """)
    assert ops[-1] == f"%y = math.{op} %x : frag<bf16>[64, 64, layout=wgmma_acc_m64n64]"


def test_row_min_of_a_blocked_fragment(body_ops):
    ops = body_ops("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        m = row_min(x)
        y = x - m
    """)
    assert ops[-2:] == ["%m = reduce.row %x {kind=min} : frag<fp32>[64, layout=rows(blocked)]",
                        f"%y = math.sub %x, %m : {FRAG}"]


def test_constants_fold_through_the_table(body_ops):
    ops = body_ops("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        y = x * rsqrt(64.0) + exp(0.0) + abs(-3) + sqrt(16.0)
    """)
    assert ops[2] == f"%2 = math.mul %x, 0.125 : {FRAG}"
    assert ops[3] == f"%3 = math.add %2, 1.0 : {FRAG}"
    assert ops[4] == f"%4 = math.add %3, 3 : {FRAG}"
    assert ops[5] == f"%y = math.add %4, 4.0 : {FRAG}"


def test_integer_abs_minimum_maximum(body_ops):
    ops = body_ops("""
        i = load(tile(I, (64, 64), (0, 0)), "blocked")
        j = abs(maximum(minimum(i, row_of(i)), -3))
    """, params='I: Tensor["M", "N", int32]')
    frag = "frag<int32>[64, 64, layout=blocked]"
    assert ops[-3:] == [f"%3 = math.min %i, %2 : {frag}", f"%4 = math.max %3, -3 : {frag}",
                        f"%j = math.abs %4 : {frag}"]


@pytest.mark.parametrize("op", sorted(set(CALLS) - {"abs"}))
def test_an_int32_fragment_is_an_error_at_its_line(dsl_error, op):
    err = dsl_error(f"""
        i = load(tile(I, (64, 64), (0, 0)), "blocked")
        y = {CALLS[op].replace("(x", "(i")}
    """, params='I: Tensor["M", "N", int32]')
    name = op.replace("_tanh", "")
    assert err.loc.file == "kern.py" and err.body_line == 2
    assert f"{name} of int32: {name} takes float fragments" in err.message
    assert err.hint == f"cast to fp32 first: {name}(cast(i, fp32))"


def test_a_predicate_is_an_error(dsl_error):
    err = dsl_error("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        y = abs(x > 0.0)
    """)
    assert err.body_line == 2 and "abs of pred: abs takes float or int32 fragments" in err.message


def test_a_tile_is_an_error(dsl_error):
    err = dsl_error("y = exp(tile(C, (64, 64), (0, 0)))")
    assert err.body_line == 1 and "exp: argument x must be a register fragment" in err.message


def test_an_unknown_gelu_form_is_an_error(dsl_error):
    err = dsl_error("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        y = gelu(x, approximate="fast")
    """)
    assert err.body_line == 2
    assert "gelu: argument approximate must be one of none, tanh, got 'fast'" in err.message


def test_row_reductions_take_2d_fragments(dsl_error):
    err = dsl_error("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        y = row_min(row_max(x))
    """)
    assert err.body_line == 2 and "row reductions take a 2-D fragment" in err.message


def test_the_names_are_reserved_in_kernels(dsl_error):
    err = dsl_error("""
        x = load(tile(C, (64, 64), (0, 0)), "blocked")
        silu = x
    """)
    assert err.body_line == 2 and "'silu' is already bound" in err.message


def test_abs_from_python_is_the_builtin():
    """`from argus.lang import *` shadows abs; host code calling it keeps Python's abs."""
    assert lang.abs(-3) == 3 and lang.abs(-2.5) == 2.5
    with pytest.raises(lang._stub.NotExecutable):
        lang.silu(1.0)
