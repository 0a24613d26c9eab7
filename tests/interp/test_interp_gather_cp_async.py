"""gather_cp_async on the interpreter, thread by thread: each of the warpgroup's 128 threads
issues its own 16-byte copies (argus.ir.gather_chunks) and one arrival; a thread's copies
land together and then it arrives, never before its earlier copies; rows outside the tensor
land as zeros; in exact mode the bytes land where a TMA gather puts them; a barrier counting
other than 128 arrivals races or deadlocks; the op inside elect_one is refused."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from interp_kernels import compile_kernel  # noqa: E402

from argus.interp.errors import InterpretError  # noqa: E402
from argus.interp.evaluator import interpret  # noqa: E402
from argus.interp.machine.clocks import ClockOwner  # noqa: E402
from argus.interp.machine import Deadlock, GlobalTensor, Machine, round_to_bf16  # noqa: E402
from argus.interp.ops.indexed import CpAsyncIssue, GatherTma  # noqa: E402
from argus.ir import gather_chunks  # noqa: E402

KERNEL = '''
@kernel(grid=(1,), block=256)
def k(X: Tensor["R", "C", bf16], I: Tensor[128, int32], Y: Tensor[128, 64, bf16]):
    buf = smem(bf16, (128, 64), swizzle="128B")
    bar = mbarrier(1)
    with elect_one("block"):
        mbarrier_init(bar[0], ARRIVALS)
    fence_mbarrier_init()
    sync_block()
    rows = load_indices(tile(I, (128,), (0,)))
    with role("producer", warpgroups=(0,), regs=40):
        gather_cp_async(buf[0], X, rows, 1, bar[0])
    with role("consumer", warpgroups=(1,), regs=232):
        wait(bar[0], 0)
        store(tile(Y, (128, 64), (0, 0)), load(buf[0], "blocked"))
'''


def inputs(seed):
    rng = np.random.default_rng(seed)
    x = round_to_bf16(rng.standard_normal((100, 192)).astype(np.float32))
    idx = rng.integers(0, 100, 128).astype(np.int32)
    idx[[3, 77]] = [-1, 100]                  # outside the tensor: zeros
    return {"X": x, "I": idx, "Y": np.full((128, 64), np.nan, np.float32)}


def expected(args):
    x, idx = args["X"], args["I"]
    want = np.zeros((128, 64), np.float32)
    ok = (idx >= 0) & (idx < x.shape[0])
    want[ok] = x[idx[ok], 64:128]
    return want


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mode", ["value", "exact"])
def test_the_rows_land_through_the_barrier(seed, mode):
    args = inputs(seed)
    out = interpret(compile_kernel(KERNEL.replace("ARRIVALS", "128")), args, seed=seed, mode=mode)
    assert out.ok, out.failures()
    np.testing.assert_array_equal(out.outputs["Y"], expected(args))


def test_a_barrier_counting_one_arrival_too_few_races_and_one_too_many_deadlocks():
    """127: the phase completes before the last thread's copies land (the consumer's read
    races them); 129: it never completes."""
    args = inputs(0)
    for seed in range(3):
        few = interpret(compile_kernel(KERNEL.replace("ARRIVALS", "127")), args, seed=seed)
        assert not few.ok and "race on buf" in " ".join(few.failures()), few.failures()
    many = interpret(compile_kernel(KERNEL.replace("ARRIVALS", "129")), args, seed=1)
    assert isinstance(many.runs[0], Deadlock), many.runs[0]


def test_inside_elect_one_the_interpreter_refuses_it_too():
    """The frontend refuses it first; an IR that has it anyway (read back from text, say) is
    refused when run."""
    from argus.ir import format_kernel, read_kernel
    kernel = compile_kernel(KERNEL.replace("ARRIVALS", "128"))
    text = format_kernel(kernel).replace("    gather.cp_async", "    elect_one {scope=warpgroup} {\n"
                                         "      gather.cp_async", 1)
    lines = text.splitlines()
    at = next(i for i, l in enumerate(lines) if "gather.cp_async" in l)
    lines.insert(at + 1, " " * (len(lines[at]) - len(lines[at].lstrip()) - 2) + "}")
    with pytest.raises(InterpretError, match="inside elect_one"):
        interpret(read_kernel("\n".join(lines)), inputs(0))


class _Agent:
    """What an instruction needs of the agent issuing it."""
    def __init__(self, m):
        self.name, self.owner = "wg0", ClockOwner(99, "wg0")


def test_each_thread_lands_its_own_chunks_then_arrives_once():
    m = Machine(exact=True)
    buf = m.smem.alloc("x", "bf16", (128, 64), stages=1, swizzle="128B")
    bar = m.mbarrier("full", count=128)
    x = GlobalTensor.from_values("X", np.arange(100 * 64, dtype=np.float32).reshape(100, 64) % 251, "bf16")
    rows = np.arange(128) % 100
    agent = _Agent(m)
    for t in range(128):
        CpAsyncIssue(t, x, rows, 0, buf.stage(0), bar).execute(m, agent)
    ops = list(m.pending)
    assert len(ops) == 128
    for op in ops:            # thread t copies exactly the chunks gather_chunks gives it
        want = {gather_chunks.chunk_of(op.thread, i, 128, 128) for i in range(8)}
        assert {(r, lo // 8) for r, lo, *_ in op.chunks} == want
    random.Random(5).shuffle(ops)
    for n, op in enumerate(ops, 1):
        op.land(m)
        op.landed = True
        assert bar.completed_phases == (1 if n == 128 else 0) and (n == 128 or bar.pending == 128 - n)
    np.testing.assert_array_equal(buf.stage(0).codes(), x.codes[rows])


def test_a_threads_later_copies_wait_for_its_earlier_ones():
    m = Machine()
    buf = m.smem.alloc("x", "bf16", (128, 64), stages=2, swizzle="128B")
    bars = [m.mbarrier(f"full[{s}]", count=128) for s in range(2)]
    x = GlobalTensor.from_values("X", np.ones((100, 64), np.float32), "bf16")
    agent = _Agent(m)
    for s in range(2):
        CpAsyncIssue(7, x, np.zeros(128, int), 0, buf.stage(s), bars[s]).execute(m, agent)
    first, second = m.pending
    assert not second.can_land() and first.can_land()
    first.land(m)
    first.landed = True
    assert second.can_land()


def test_in_exact_mode_the_bytes_land_where_a_tma_gather_puts_them():
    m = Machine(exact=True)
    a = m.smem.alloc("a", "bf16", (128, 64), stages=1, swizzle="128B")
    b = m.smem.alloc("b", "bf16", (128, 64), stages=1, swizzle="128B")
    bar_a, bar_b = m.mbarrier("a", count=128), m.mbarrier("b", count=1)
    rng = np.random.default_rng(2)
    x = GlobalTensor.from_values("X", rng.standard_normal((50, 192)).astype(np.float32), "bf16")
    rows = rng.integers(-3, 53, 128)
    agent = _Agent(m)
    for t in range(128):
        CpAsyncIssue(t, x, rows, 2, a.stage(0), bar_a).execute(m, agent)
    for op in list(m.pending):
        op.land(m)
        op.landed = True
    bar_b.arrive(1, expect_tx=128 * 64 * 2)
    GatherTma("wg0", agent.owner, x, rows, 2, b.stage(0), bar_b).land(m)
    mem = m.smem.bytes
    n = a.stage_bytes
    assert np.array_equal(mem[a.offset:a.offset + n], mem[b.offset:b.offset + n])
    assert bar_a.completed_phases == 1 and bar_b.completed_phases == 1
