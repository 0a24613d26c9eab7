"""Round trip: reading the printed IR and printing it again gives the same text."""

from pathlib import Path

import pytest

from argus.frontend import parse_file
from argus.ir import check_kernel, format_kernel
from argus.ir.reader import read_kernel

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@pytest.mark.parametrize("locs", [False, True])
def test_round_trip(path, locs):
    for kernel in parse_file(path).values():
        text = format_kernel(kernel, locs=locs)
        again = read_kernel(text)
        check_kernel(again)
        assert format_kernel(again, locs=locs) == text


def test_read_kernel_rejects_undefined_values():
    text = "kernel @k() {\n  launch grid=(1) block=128 cluster=(1, 1, 1)\n  arith.add %x, 1\n}\n"
    with pytest.raises(ValueError, match="%x is not defined"):
        read_kernel(text)
