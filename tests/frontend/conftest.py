"""Helpers: compile a kernel body written as a string, or catch the DSLError it raises."""

import textwrap

import pytest

from argus.frontend import DSLError, parse_source
from argus.ir import format_kernel

HEADER = '''from argus.lang import *

@kernel(grid=(1,), block={block}{cluster})
def k({params}):
'''
PARAMS = 'A: Tensor["M", "K", bf16], B: Tensor["N", "K", bf16], C: Tensor["M", "N", fp32]'
FILE = "kern.py"
BODY_FIRST_LINE = 5   # line number of the first body line in the generated source


def source(body: str, params: str = PARAMS, block: int = 384, cluster=None) -> str:
    extra = f", cluster={cluster!r}" if cluster else ""
    return HEADER.format(block=block, params=params, cluster=extra) + textwrap.indent(
        textwrap.dedent(body).strip("\n"), "    ") + "\n"


@pytest.fixture
def compile_body():
    def run(body, params=PARAMS, block=384, cluster=None):
        return parse_source(source(body, params, block, cluster), FILE)["k"]
    return run


@pytest.fixture
def body_ops():
    """The printed op lines of the body (without the header lines), stripped."""
    def run(body, params=PARAMS, block=384, cluster=None):
        kernel = parse_source(source(body, params, block, cluster), FILE)["k"]
        lines = format_kernel(kernel).splitlines()[1:-1]
        header = ("symbols ", "const ", "launch ", "schedule tiles=")
        return [l.strip() for l in lines if not l.strip().startswith(header)
                and not (l.strip().startswith("role ") and " warpgroups=(" in l.split("{")[0])]
    return run


@pytest.fixture
def dsl_error():
    """The DSLError for a body; `line` is relative to the body (1 = first body line)."""
    def run(body, params=PARAMS, block=384, cluster=None):
        with pytest.raises(DSLError) as info:
            parse_source(source(body, params, block, cluster), FILE)
        err = info.value
        err.body_line = err.loc.line - BODY_FIRST_LINE + 1
        return err
    return run
