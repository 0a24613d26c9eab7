"""User errors are DSLErrors, never Python exceptions from inside the compiler: call every
surface function with arguments of the wrong kind, and with none."""

import inspect

import pytest

import argus.lang as lang
from argus.frontend import DSLError

SETUP = """
a_s = smem(bf16, (64, 64), stages=2)
bar = mbarrier(2)
x = load(tile(C, (64, 64), (0, 0)), "blocked")
"""
WRONG = ['"zz"', "1.5", "bar", "a_s", "x", "(1, 2)", "-1"]
CALLS = sorted(n for n in lang.surface_functions() if n not in ("tag", "coord"))


def _arity(name):
    params = inspect.signature(lang.surface_functions()[name]).parameters.values()
    return max(1, len([p for p in params if p.default is p.empty
                       and p.kind is p.POSITIONAL_OR_KEYWORD]))


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("wrong", WRONG)
def test_wrong_arguments_give_dsl_errors(dsl_error, compile_body, name, wrong):
    args = ", ".join([wrong] * _arity(name))
    body = SETUP + f"r = {name}({args})"
    try:
        compile_body(body)
    except DSLError as err:
        assert err.loc.file == "kern.py" and err.message


def _requires_arguments(name):
    params = inspect.signature(lang.surface_functions()[name]).parameters.values()
    return any(p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD for p in params)


@pytest.mark.parametrize("name", [n for n in CALLS if _requires_arguments(n)])
def test_missing_arguments_give_dsl_errors(compile_body, name):
    with pytest.raises(DSLError):
        compile_body(SETUP + f"r = {name}()")
