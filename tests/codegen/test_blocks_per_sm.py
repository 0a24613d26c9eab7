"""`@kernel(..., blocks_per_sm=n)`: n blocks share an SM. Every stage reads the one launch
field: the frontend checks it, the IR prints and reads it back, the code generator budgets
each block 1/n of the register file (`__launch_bounds__(block, n)`), the resource pass
checks the roles' setmaxnreg against that pool and n blocks' shared memory against the SM's,
and the limits module says what fits."""

from __future__ import annotations

import pytest

from argus.codegen import generate
from argus.frontend import DSLError, parse_source
from argus.ir.printer import format_kernel
from argus.ir.reader import read_kernel
from argus.limits import (REGISTERS_PER_SM, SMEM_PER_SM, SMEM_RESERVED_PER_BLOCK,
                          registers_at_entry, smem_fits_sm)
from argus.verify import resources

# a producer and one consumer warpgroup, a ring of `S` 32 KB stages
SRC = '''from argus.lang import *

S = 2
OCC = 2
REGS = 232


@kernel(grid=(264,), block=256, blocks_per_sm=OCC)
def two_a_sm(A: Tensor["M", 128, "bf16"]):
    a_s = smem("bf16", (128, 128), stages=S, swizzle="128B")
    full = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
    fence_mbarrier_init()
    sync_block()
    with role("producer", warpgroups=(0,), regs=24):
        with elect_one():
            for s in range(S):
                expect_tx(full[s], nbytes(a_s[s]))
                tma_load(a_s[s], tile(A, (128, 128), (s, 0)), full[s])
    with role("consumer", warpgroups=(1,), regs=REGS):
        for s in range(S):
            wait(full[s], 0)
'''


def _kernel(**constants):
    return parse_source(SRC, "two_a_sm.py", overrides=constants or None)["two_a_sm"]


def _errors(kernel):
    return [f for f in resources.check(kernel) if f.severity == "error"]


def test_the_limits_split_the_sm_between_its_blocks():
    assert registers_at_entry(384) == 168 and registers_at_entry(256, 2) == 128
    assert registers_at_entry(128) == 256            # at most setmaxnreg's 256
    assert registers_at_entry(256, 2) * 256 * 2 == REGISTERS_PER_SM
    half = SMEM_PER_SM // 2 - SMEM_RESERVED_PER_BLOCK
    assert smem_fits_sm(half, 2) and not smem_fits_sm(half + 1, 2)
    assert smem_fits_sm(half + 1, 1)


def test_two_blocks_an_sm_compile_with_half_the_registers_each():
    kernel = _kernel()
    assert kernel.launch.blocks_per_sm == 2
    assert _errors(kernel) == []                     # 24 x 128 + 232 x 128 = 128 x 256
    gen = generate(kernel)
    assert "__launch_bounds__(256, 2)" in gen.source
    assert gen.blocks_per_sm == 2 and gen.describe()["blocks_per_sm"] == 2
    one = generate(_kernel(OCC=1))                   # one block: 256 at entry, capped
    assert "__maxnreg__(232)" in one.source and one.blocks_per_sm == 1


def test_the_ir_text_keeps_blocks_per_sm():
    text = format_kernel(_kernel())
    assert "blocks_per_sm=2" in text.splitlines()[[i for i, l in enumerate(text.splitlines())
                                                    if "launch grid" in l][0]]
    assert read_kernel(text).launch.blocks_per_sm == 2
    assert "blocks_per_sm" not in format_kernel(_kernel(OCC=1))
    assert read_kernel(format_kernel(_kernel(OCC=1))).launch.blocks_per_sm == 1


def test_roles_over_the_halved_register_pool_are_an_error():
    errors = _errors(_kernel(REGS=240))              # 24 + 240 > 2 x 128
    assert [f.check for f in errors] == ["resources.registers"]
    assert "32768" in errors[0].message and "2 block(s)" in errors[0].message
    assert _errors(_kernel(REGS=240, OCC=1)) == []   # one block: the whole file


def test_blocks_whose_shared_memory_does_not_fit_the_sm_are_an_error():
    # 4 stages of 32 KB: 128 KB a block fits a block (227 KB) but not two an SM (228 KB)
    errors = _errors(_kernel(S=4))
    assert [f.check for f in errors] == ["resources.smem"]
    assert "blocks_per_sm=2" in errors[0].message and str(SMEM_PER_SM) in errors[0].message
    assert _errors(_kernel(S=4, OCC=1)) == []
    with pytest.raises(Exception, match="blocks_per_sm=2"):
        generate(_kernel(S=4))


@pytest.mark.parametrize("value,message", [
    ("0", "is not an int in 1..32"), ("33", "is not an int in 1..32"),
    ("1.5", "is not an int in 1..32"), ("True", "is not an int in 1..32"),
    ("9", "2304 threads, over the 2048 an SM holds"),
])
def test_a_bad_blocks_per_sm_names_its_line(value, message):
    src = SRC.replace("blocks_per_sm=OCC", f"blocks_per_sm={value}")
    with pytest.raises(DSLError) as err:
        parse_source(src, "two_a_sm.py")
    assert message in str(err.value)
    assert "two_a_sm.py:8:" in str(err.value)       # the decorator's line
