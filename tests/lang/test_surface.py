"""The surface is declarations only, and every declaration has a frontend rule (and back)."""

import inspect

import pytest

import argus.lang as lang
from argus.frontend.rules import RULES
from argus.lang._stub import NotExecutable

SPECIAL = {"tag_assert"}   # translated by the frontend's predicate translator, not a rule


def test_every_surface_function_has_a_rule_and_back():
    surface = set(lang.surface_functions())
    assert surface - set(RULES) == SPECIAL
    assert set(RULES) - surface == set()


def test_surface_functions_refuse_to_run():
    with pytest.raises(NotExecutable, match="never runs"):
        lang.wgmma(None, None, None)


def test_every_surface_function_is_documented():
    for name, fn in lang.surface_functions().items():
        assert inspect.getdoc(fn), name


def test_kernel_decorator_records_without_running(tmp_path, monkeypatch):
    src = tmp_path / "kmod.py"
    src.write_text('from argus.lang import *\n\n@kernel(block=128)\n'
                   'def k(X: Tensor["M", fp32]):\n    assume(M % 4 == 0)\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    import kmod
    assert isinstance(kmod.k, lang.KernelDef) and kmod.k.launch["block"] == 128
    from argus.runtime.launch_errors import LaunchError
    monkeypatch.setenv("ARGUS_INTERPRET", "1")     # a call runs the kernel (runtime/jit.py)
    with pytest.raises(LaunchError, match="X must be a torch tensor or a DLPack array, got int"):
        kmod.k(1)
    from argus.frontend import parse_kernel_function
    ir = parse_kernel_function(kmod.k.function)
    assert ir.name == "k" and len(ir.assumptions) == 1
