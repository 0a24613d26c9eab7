"""Printer: golden text of the examples, determinism, source locations.

Regenerate the goldens after an intended change with ARGUS_UPDATE_GOLDEN=1 and review the
diff: the golden is the reviewed text form, not a copy of the printer's logic."""

import os
from pathlib import Path

import pytest

from argus.frontend import parse_file
from argus.ir import format_kernel

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("example,kernel", [("copy", "copy"), ("gemm", "gemm"),
                                            ("flash_attention", "flash_fwd")])
def test_golden(example, kernel):
    text = format_kernel(parse_file(ROOT / "examples" / f"{example}.py")[kernel])
    golden = GOLDEN / f"{example}.ir"
    if os.environ.get("ARGUS_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_printing_is_deterministic():
    path = ROOT / "examples" / "gemm.py"
    assert format_kernel(parse_file(path)["gemm"]) == format_kernel(parse_file(path)["gemm"])


def test_locations_point_at_the_source_line():
    path = ROOT / "examples" / "gemm.py"
    text = format_kernel(parse_file(path)["gemm"], locs=True)
    (line,) = [l for l in text.splitlines() if "wgmma.mma" in l]
    src_line = next(i for i, l in enumerate(path.read_text().splitlines(), 1)
                    if l.strip().startswith("wgmma(acc"))
    assert line.endswith(f"@{path}:{src_line}:17")
