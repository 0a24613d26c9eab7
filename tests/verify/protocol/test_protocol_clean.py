"""The repo's kernels verify clean under the protocol checks, fast enough for an agent loop."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from argus.frontend.parse import parse_file
from argus.verify import protocol

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = [("gemm.py", "gemm"), ("copy.py", "copy"), ("flash_attention.py", "flash_fwd")]


@pytest.mark.parametrize("file,name", EXAMPLES, ids=[f for f, _ in EXAMPLES])
def test_example_has_no_protocol_errors(file, name):
    kernel = parse_file(ROOT / "examples" / file)[name]
    findings = protocol.check(kernel)
    assert [f for f in findings if f.severity == "error"] == [], [str(f) for f in findings]


def test_gemm_protocol_checks_take_well_under_a_second():
    kernel = parse_file(ROOT / "examples" / "gemm.py")["gemm"]
    protocol.check(kernel)          # warm z3 up
    start = time.perf_counter()
    protocol.check(kernel)
    assert time.perf_counter() - start < 0.5
