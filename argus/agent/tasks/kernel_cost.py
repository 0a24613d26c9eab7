"""The CPU cost model of any DSL kernel: its interpreter run, timed on a model of one H200 SM.

The GEMM cost model (cost_model.py) knows only the knob table. A whole kernel written by a
model has no knobs, so its time is estimated from what it does: while the interpreter runs
the kernel (value mode, for the correctness check anyway), every op rule is wrapped by a
timer that keeps, per block,

- a clock per warpgroup (the agent), advanced by the work it issues and by its waits;
- three pipes the block's warpgroups share: the tensor cores (wgmma: 2 m n k flops at the
  SM's share of the bf16 peak), the memory path (TMA, global loads and stores, gathers:
  bytes at the SM's share of HBM bandwidth, plus a fixed latency per transfer) and the
  special-function unit (exp, exp2, log, tanh, ...: elements at 16 per clock), and the
  ALUs for elementwise fragment work (128 lanes per clock);
- the time each mbarrier last completed (an arrive, the landing of a TMA into it), so a
  wait ends when what it waits for has landed: a one-stage ring exposes the load latency
  that a two-stage ring hides, and the estimate shows it.

A block's time is its slowest clock; blocks are list-scheduled onto SM_COUNT x occupancy
slots in block order; the launch adds a fixed overhead. The result is an ESTIMATE for an
H200, labelled so everywhere it is shown: it ranks candidates, it is not a measurement.
The totals also give profile signals (memory-bound, latency-bound, ...) for knowledge
retrieval, in the knowledge base's vocabulary.
"""
from __future__ import annotations

import contextlib
import heapq
import math
from dataclasses import dataclass, field

from argus.limits import MAX_THREADS_PER_SM, REGISTERS_PER_SM, SM_COUNT, SMEM_PER_SM

CLOCK_HZ = 1.755e9
TENSOR_FLOPS = 989e12            # bf16 dense, H200 (argus/bench/roofline.py's PEAKS)
HBM_BYTES = 4.8e12
SM_MAX_BYTES = 200e9             # what one SM's loads can pull when few SMs compete
MEMORY_LATENCY_S = 0.8e-6        # a TMA or global load from issue to landing, unloaded
ISSUE_S = 20e-9                  # issuing an async op, a wait that is already satisfied
ALU_LANES = 128                  # fp32 lanes per SM per clock
SFU_LANES = 16                   # exp2 and friends per SM per clock
LAUNCH_S = 4e-6
DEFAULT_REGISTERS = 64           # per thread, when no role states its budget

SFU_OPS = {"math.exp", "math.exp2", "math.log", "math.log2", "math.tanh", "math.sigmoid",
           "math.silu", "math.gelu", "math.gelu_tanh", "math.erf", "math.rsqrt", "math.sqrt"}
ALU_OPS = {"math.add", "math.sub", "math.mul", "math.div", "math.max", "math.min",
           "math.neg", "math.abs", "math.select", "math.cmp", "math.cast", "reduce.row",
           "frag.assign", "frag.convert", "scan.prefix_sum"}
LOADS = {"load", "gather.load", "indices.load", "ldmatrix"}
STORES = {"store", "scatter.store", "atomic.add", "stmatrix"}
ASYNC_LOADS = {"tma.load", "gather.tma"}


def _elements(value_type) -> int:
    shape = getattr(value_type, "shape", None) or ()
    return math.prod(d for d in shape if isinstance(d, int)) if shape else 1


def _bytes(value_type) -> float:
    dtype = getattr(value_type, "dtype", None)
    return _elements(value_type) * (dtype.bits if dtype is not None else 32) / 8


@dataclass
class BlockClock:
    """The timing state of one block (its warpgroups share the SM's pipes)."""
    share: float = 1.0                                  # 1 / blocks resident per SM
    sm_bytes: float = HBM_BYTES / SM_COUNT              # this SM's share of HBM bandwidth
    agents: dict[str, float] = field(default_factory=dict)
    pipes: dict[str, float] = field(default_factory=dict)
    barriers: dict[int, float] = field(default_factory=dict)
    wgmma: dict[str, list[float]] = field(default_factory=dict)
    stores: dict[str, list[float]] = field(default_factory=dict)
    busy: dict[str, float] = field(default_factory=dict)   # seconds each pipe worked

    def use(self, pipe: str, ready: float, seconds: float) -> float:
        """Occupy `pipe` for `seconds` from `ready` (or when it frees); when it is done."""
        start = max(ready, self.pipes.get(pipe, 0.0))
        self.pipes[pipe] = start + seconds
        self.busy[pipe] = self.busy.get(pipe, 0.0) + seconds
        return start + seconds

    @property
    def seconds(self) -> float:
        ends = list(self.agents.values()) + [max(v) for v in self.stores.values() if v]
        return max(ends + list(self.pipes.values()) + [0.0])


class KernelTimer:
    """Collects BlockClocks while the interpreter runs (install it with `timing`)."""

    def __init__(self, share: float = 1.0, active_sms: int = SM_COUNT):
        """`share`: the SM fraction one block gets (1 / blocks resident at once);
        `active_sms`: how many SMs the launch keeps busy (they share HBM bandwidth)."""
        self.share = share
        self.sm_bytes = min(SM_MAX_BYTES, HBM_BYTES / max(1, min(active_sms, SM_COUNT)))
        self.blocks: dict[tuple, BlockClock] = {}
        self.flops = 0.0
        self.bytes = 0.0
        self.sfu = 0.0

    def clock(self, agent) -> BlockClock:
        key = (id(agent.block.kernel), agent.block.block_index)
        if key not in self.blocks:
            self.blocks[key] = BlockClock(self.share, self.sm_bytes)
        return self.blocks[key]

    def wrap(self, opcode: str, rule):
        def timed(agent, op, args):
            block = self.clock(agent)
            name = agent.name
            t = block.agents.get(name, 0.0)
            t = self._before(block, name, t, op, args)
            block.agents[name] = t
            out = yield from rule(agent, op, args)
            block.agents[name] = self._after(block, name, block.agents[name], op, args, agent)
            return out
        return timed

    def _memory(self, block: BlockClock, t: float, nbytes: float) -> float:
        self.bytes += nbytes
        return block.use("memory", t, nbytes / block.sm_bytes / block.share)

    def _before(self, block: BlockClock, name: str, t: float, op, args) -> float:
        code = op.opcode
        if code == "wgmma.mma":
            flops = 2.0 * op.attrs["m"] * op.attrs["n"] * op.attrs["k"]
            self.flops += flops
            done = block.use("tensor", t, flops / (TENSOR_FLOPS / SM_COUNT) / block.share)
            block.wgmma.setdefault(name, []).append(done)
            return t + ISSUE_S
        if code in ASYNC_LOADS:
            landed = self._memory(block, t, _bytes(op.operands[0].type)) + MEMORY_LATENCY_S
            bar = op.arg("bar", args)
            block.barriers[id(bar)] = max(block.barriers.get(id(bar), 0.0), landed)
            return t + ISSUE_S
        if code == "tma.store":
            done = self._memory(block, t, _bytes(op.operands[1].type)) + MEMORY_LATENCY_S
            block.stores.setdefault(name, []).append(done)
            return t + ISSUE_S
        if code in LOADS:
            return self._memory(block, t, _bytes(op.results[0].type if op.results
                                                 else op.operands[0].type)) + MEMORY_LATENCY_S
        if code in STORES:
            typed = max((o for o in op.operands if hasattr(o, "type")), key=lambda o:
                        _bytes(o.type), default=None)
            done = self._memory(block, t, _bytes(typed.type) if typed is not None else 4)
            block.stores.setdefault(name, []).append(done)
            return t + ISSUE_S
        if code in SFU_OPS:
            n = _elements(op.results[0].type)
            self.sfu += n
            return block.use("sfu", t, n / (SFU_LANES * CLOCK_HZ) / block.share)
        if code in ALU_OPS:
            n = _elements(op.results[0].type if op.results else op.operands[0].type)
            return block.use("alu", t, n / (ALU_LANES * CLOCK_HZ) / block.share)
        return t

    def _after(self, block: BlockClock, name: str, t: float, op, args, agent) -> float:
        code = op.opcode
        if code in ("mbarrier.arrive", "mbarrier.expect_tx"):
            bar = op.arg("bar", args)
            block.barriers[id(bar)] = max(block.barriers.get(id(bar), 0.0), t)
        elif code == "mbarrier.wait":
            t = max(t, block.barriers.get(id(op.arg("bar", args)), 0.0)) + ISSUE_S
        elif code == "wgmma.wait":
            pending = block.wgmma.get(name, [])
            keep = int(op.attrs.get("pending", 0))
            done, rest = (pending[:-keep], pending[-keep:]) if keep else (pending, [])
            t = max([t] + done)
            block.wgmma[name] = rest
        elif code == "tma.store_wait":
            t = max([t] + block.stores.get(name, []))
            block.stores[name] = []
        elif code in ("barrier.block", "barrier.named", "barrier.cluster"):
            t = max([t] + list(block.agents.values())) + ISSUE_S
        return t

    def estimate(self, kernel_ir, blocks_total: int | None = None) -> dict:
        """The kernel's estimated time and what it is made of (seconds, ratios, signals)."""
        times = [b.seconds for b in self.blocks.values()]
        resident = resident_blocks(kernel_ir)
        slots = [0.0] * (SM_COUNT * resident)
        for t in times:                          # list scheduling in block order
            heapq.heapreplace(slots, slots[0] + t)
        span = max(slots) if times else 0.0
        seconds = span + LAUNCH_S
        tensor_s = self.flops / TENSOR_FLOPS
        memory_s = self.bytes / HBM_BYTES
        sfu_s = self.sfu / (SFU_LANES * CLOCK_HZ * SM_COUNT)
        out = {"seconds": seconds, "time_ms": seconds * 1e3, "blocks": len(times),
               "blocks_per_sm": resident, "flops": self.flops, "bytes": self.bytes,
               "tensor_utilisation": tensor_s / seconds if seconds else 0.0,
               "memory_utilisation": memory_s / seconds if seconds else 0.0,
               "sfu_utilisation": sfu_s / seconds if seconds else 0.0,
               "block_seconds": {"max": max(times, default=0.0),
                                 "mean": sum(times) / len(times) if times else 0.0},
               "source": "cost model estimate (H200 SM model over the interpreter run; "
                         "not a measurement)"}
        out["signals"] = signals(out)
        return out


def resident_blocks(kernel_ir) -> int:
    """Blocks one SM holds at once: threads and shared memory permitting."""
    smem = 0
    for op in kernel_ir.walk():
        if op.opcode == "smem.alloc":
            a = op.attrs
            bits = a["dtype"].bits if hasattr(a["dtype"], "bits") else 16
            smem += math.prod(a["shape"]) * a.get("stages", 1) * bits // 8
    threads = kernel_ir.launch.block
    regs = sum(op.attrs.get("regs", 0) * 128 * len(op.attrs.get("warpgroups", ()))
               for op in kernel_ir.walk() if op.opcode == "role")
    regs = regs or threads * DEFAULT_REGISTERS
    by_regs = max(1, REGISTERS_PER_SM // regs)
    by_threads = max(1, MAX_THREADS_PER_SM // max(threads, 1))
    by_smem = max(1, SMEM_PER_SM // smem) if smem else by_threads
    return max(1, min(by_threads, by_smem, by_regs, 32))


def signals(est: dict) -> list[str]:
    """Profile signals (the knowledge base's names) read off an estimate."""
    out = []
    slots = SM_COUNT * est["blocks_per_sm"]
    if est["memory_utilisation"] >= 0.6:
        out.append("memory-bound")
    if est["tensor_utilisation"] >= 0.6:
        out.append("compute-bound")
    if est["flops"] and est["tensor_utilisation"] < 0.4:
        out.append("low-tensor-utilisation")
    if max(est["memory_utilisation"], est["tensor_utilisation"], est["sfu_utilisation"]) < 0.4:
        out.append("latency-bound")
    if est["sfu_utilisation"] >= 0.4:
        out += ["mufu-bound", "softmax-bound"]
    if est["blocks"] < slots // 2:
        out.append("low-occupancy")
    elif est["blocks"] > slots and (est["blocks"] % slots) and (est["blocks"] % slots) < slots / 2:
        out.append("wave-quantisation")
    if est["seconds"] < 3 * LAUNCH_S:
        out.append("launch-overhead")
    return out


def launch_timer(kernel_ir, symbols: dict) -> KernelTimer:
    """The timer for one launch of `kernel_ir` at these shape symbols: the blocks resident
    per SM as the grid fills them, and the SMs it keeps busy."""
    from argus.interp.exprs import eval_extent

    grid = [eval_extent(g, symbols, kernel_ir.constants) for g in kernel_ir.launch.grid]
    blocks = math.prod(grid)
    resident = min(resident_blocks(kernel_ir), max(1, -(-blocks // SM_COUNT)))
    return KernelTimer(1.0 / resident, min(blocks, SM_COUNT))


@contextlib.contextmanager
def timing(timer: KernelTimer):
    """Every interpreter op rule timed by `timer` while the block runs (this process only)."""
    from argus.interp.ops import RULES

    saved = dict(RULES)
    try:
        for opcode, rule in saved.items():
            RULES[opcode] = timer.wrap(opcode, rule)
        yield timer
    finally:
        RULES.clear()
        RULES.update(saved)
