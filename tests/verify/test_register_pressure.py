"""Registers per thread of the live fragments (argus.verify.register_pressure): what one
fragment holds, and which fragments are live at once."""

from __future__ import annotations

import pytest

from argus.frontend.parse import parse_source
from argus.ir.types import DType, FragmentType
from argus.verify.register_pressure import fragment_registers, pressure

HEADER = "from argus.lang import *\n\n"


@pytest.mark.parametrize("shape,dtype,layout,regs", [
    ((64, 256), DType.fp32, "wgmma_acc_m64n256", 128),     # 64 x 256 / 128 threads
    ((64, 128), DType.fp32, "wgmma_acc_m64n128", 64),
    ((64, 256), DType.bf16, "wgmma_acc_m64n256", 64),      # two 16-bit values a register
    ((64, 64), DType.fp32, "blocked", 32),
    ((64,), DType.fp32, "rows(blocked)", 64),              # every thread holds every row
    ((64,), DType.fp32, "rows(wgmma_acc_m64n64)", 2),      # a thread's two rows
])
def test_registers_of_one_fragment(shape, dtype, layout, regs):
    assert fragment_registers(FragmentType(shape, dtype, layout)) == regs


def _peak(body: str, role: str = "c"):
    k = parse_source(HEADER + body, "k.py")["k"]
    pr = pressure(k)
    scope = next(s for s in pr.scopes() if s is not None and s.attrs["name"] == role)
    p = pr.peak(scope)
    return p.regs, sorted(v.name.split(".")[0] for v in p.held)


KERNEL = '''
@kernel(grid=(1,), block=256)
def k(X: Tensor[64, 256, fp32], Y: Tensor[64, 256, fp32]):
    with role("p", warpgroups=(0,), regs=40):
        fence_proxy_async()
    with role("c", warpgroups=(1,), regs=232):
BODY
'''


def _body(text: str) -> str:
    return KERNEL.replace("BODY", "\n".join("        " + l for l in text.strip().splitlines()))


def test_fragments_used_one_after_the_other_share_registers():
    regs, held = _peak(_body('''
a = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=1.0)
store(tile(Y, (64, 256), (0, 0)), a)
b = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=2.0)
store(tile(Y, (64, 256), (0, 0)), b)'''))
    assert regs == 128 and len(held) == 1


def test_fragments_used_together_add_up():
    regs, held = _peak(_body('''
a = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=1.0)
b = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=2.0)
c = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=3.0)
store(tile(Y, (64, 256), (0, 0)), a + b + c)'''))
    assert regs == 384 and held[:3] == ["a", "b", "c"]


def test_a_temporary_read_once_by_an_elementwise_op_is_streamed():
    # exp2(a * 2.0) + 1.0 is computed element by element into what is stored: one array
    regs, _ = _peak(_body('''
a = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=1.0)
store(tile(Y, (64, 256), (0, 0)), exp2(a * 2.0) + 1.0)'''))
    assert regs == 128
    # so is exp(a) summed by a row reduction, while a stays live for the subtraction
    regs, held = _peak(_body('''
a = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=1.0)
store(tile(Y, (64, 256), (0, 0)), a - row_sum(exp(a)))'''))
    assert regs == 128 + 2 and "a" in held and len(held) == 2   # a, its row sums; no exp(a)


def test_a_temporary_read_twice_is_an_array_of_its_own():
    regs, _ = _peak(_body('''
a = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=1.0)
t = exp2(a * 2.0)
store(tile(Y, (64, 256), (0, 0)), t + t * a)'''))
    assert regs == 256          # a (read by t * a) and t, held together


def test_a_fragment_read_in_a_loop_stays_live_through_it():
    # b is allocated inside the loop; a, read at every iteration, lives across all of them
    regs, held = _peak(_body('''
a = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=1.0)
for i in range(4):
    b = fragment(fp32, (64, 128), "wgmma_acc_m64n128", init=2.0)
    store(tile(Y, (64, 128), (0, 0)), b)
    store(tile(Y, (64, 256), (0, 0)), a)'''))
    assert regs == 192 and held == ["a", "b"]


def test_overwriting_a_fragment_ends_the_old_contents():
    # acc is zeroed at the top of each iteration: dead between its last read and that
    regs, held = _peak(_body('''
acc = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=0.0)
for i in range(4):
    assign(acc, 0.0)
    store(tile(Y, (64, 256), (0, 0)), acc)
    out = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=1.0)
    store(tile(Y, (64, 256), (0, 0)), out)'''))
    assert regs == 128 and len(held) == 1
    regs, _ = _peak(_body('''
acc = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=0.0)
for i in range(4):
    store(tile(Y, (64, 256), (0, 0)), acc)
    out = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=1.0)
    store(tile(Y, (64, 256), (0, 0)), out)'''))
    assert regs == 256          # without the reset, the next iteration reads acc again


def test_a_fragment_of_another_role_is_not_counted_where_it_is_dead():
    k = parse_source(HEADER + _body('''
a = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=1.0)
store(tile(Y, (64, 256), (0, 0)), a)'''), "k.py")["k"]
    pr = pressure(k)
    producer = next(s for s in pr.scopes() if s is not None and s.attrs["name"] == "p")
    assert pr.peak(producer).regs == 0


def test_deeply_nested_loops_are_walked_once_each():
    # a loop body is walked once (its gen/kill summary gives what the next iteration
    # reads), not twice per level: 40 levels would be 2^40 walks
    import time
    depth = 40
    lines = ['a = fragment(fp32, (64, 256), "wgmma_acc_m64n256", init=1.0)']
    for d in range(depth):
        lines.append("    " * d + f"for i{d} in range(2):")
    lines.append("    " * depth + "store(tile(Y, (64, 256), (0, 0)), a)")
    start = time.perf_counter()
    regs, held = _peak(_body("\n".join(lines)))
    assert regs == 128 and held == ["a"]
    assert time.perf_counter() - start < 5
