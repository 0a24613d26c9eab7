"""Bad inputs and unsupported ops give an InterpretError that says what to change."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_kernels import PREFIX_SUM, compile_kernel  # noqa: E402

from argus.frontend.parse import parse_kernel  # noqa: E402
from argus.interp.errors import InterpretError  # noqa: E402
from argus.interp.evaluator import interpret  # noqa: E402

COPY = Path(__file__).resolve().parents[2] / "examples" / "copy.py"


@pytest.fixture(scope="module")
def copy_kernel():
    return parse_kernel(COPY, "copy")


def test_missing_input_is_named(copy_kernel):
    with pytest.raises(InterpretError, match=r"missing inputs \['Y'\]"):
        interpret(copy_kernel, {"X": np.zeros((64, 64), np.float32)})


def test_unknown_input_is_named(copy_kernel):
    z = np.zeros((64, 64), np.float32)
    with pytest.raises(InterpretError, match=r"unknown inputs \['Z'\]"):
        interpret(copy_kernel, {"X": z, "Y": z, "Z": z})


def test_wrong_rank_is_named(copy_kernel):
    with pytest.raises(InterpretError, match="input X has rank 1"):
        interpret(copy_kernel, {"X": np.zeros(64, np.float32), "Y": np.zeros((64, 64))})


def test_conflicting_symbol_is_named(copy_kernel):
    with pytest.raises(InterpretError, match="symbol M is 64 from X but 128 from Y"):
        interpret(copy_kernel, {"X": np.zeros((64, 64)), "Y": np.zeros((128, 64))})


def test_failed_assumption_names_its_line(copy_kernel):
    with pytest.raises(InterpretError, match=r"copy.py:\d+:\d+: assumption does not hold"):
        interpret(copy_kernel, {"X": np.zeros((96, 64)), "Y": np.zeros((96, 64))})


def test_block_outside_grid(copy_kernel):
    z = np.zeros((64, 64), np.float32)
    with pytest.raises(InterpretError, match="block 1 is outside the grid of 1 blocks"):
        interpret(copy_kernel, {"X": z, "Y": z}, blocks=[1])


def test_op_without_rule_names_opcode_and_line(monkeypatch):
    from argus.interp.ops import RULES   # scan.prefix_sum has a rule now: take it away here
    monkeypatch.delitem(RULES, "scan.prefix_sum")
    kernel = compile_kernel(PREFIX_SUM)
    with pytest.raises(InterpretError, match=r"interp_kernel.py:\d+:\d+: .*'scan.prefix_sum'"):
        interpret(kernel, {"I": np.zeros(64, np.int32)})
