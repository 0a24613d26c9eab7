"""The IR evaluator: runs a kernel's IR on the machine model, block by block.

Each cluster of the grid gets its own `Machine` (clusters share only global memory; the
blocks of one cluster share the scheduler and reach each other through remote arrives,
TMA multicast and the cluster barrier, see cluster.py). Every warpgroup of the block is one
agent: it walks the kernel body, enters a `role` region only when it is one of the role's
warpgroups, and yields the machine instructions the op rules produce. Shared-memory
buffers and mbarriers are created once per block before the agents start. How each
opcode runs is in `argus.interp.ops.<family>`; this module only walks regions.

Two modes: "value" keeps each fragment as its logical tile and shared memory row-major;
"exact" (fragment-exact) keeps every fragment per (thread, register) through its layout
and shared memory as bytes through the swizzles, with the rules of `argus.interp.exact`
overriding those of the ops that touch registers (docs/interpreter-model.md).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from argus.ir.nodes import Block, Kernel, Op, Value
from argus.ir.types import GlobalTensorType
from argus.limits import SMEM_PER_SM

from .errors import InterpretError
from .cluster import ClusterState, check_cluster, group_blocks
from .exact.rules import EXACT_RULES
from .exprs import eval_extent
from .machine import GlobalTensor, Machine, RunResult
from .ops import RULES
from .values import machine_dtype

WARPGROUP = 128
MODES = ("value", "exact")


@dataclass
class BlockState:
    """What the agents of one block share: the machine, tensors, buffers and barriers."""
    kernel: Kernel
    machine: Machine
    tensors: dict[str, GlobalTensor]
    symbols: dict[str, int]
    block_index: int
    grid: tuple[int, ...]
    threads: int
    allocs: dict[int, Any] = field(default_factory=dict)   # id(op) -> buffer / barriers
    exact: bool = False
    rank: int = 0            # this block's rank in its cluster
    prefix: str = ""         # "cta<rank>." on names when the cluster has several blocks
    cluster: Any = None      # the ClusterState shared by the blocks of one cluster

    @property
    def num_blocks(self) -> int:
        return int(np.prod(self.grid))

    def block_id(self, axis: str) -> int:
        rest = self.block_index
        for name, extent in zip("xyz", self.grid):
            if name == axis:
                return rest % extent
            rest //= extent
        return 0


class Agent:
    """One warpgroup walking the kernel body; `env` maps SSA values to Python objects."""

    def __init__(self, block: BlockState, warpgroup: int):
        self.block = block
        self.warpgroup = warpgroup
        self.name = f"{block.prefix}wg{warpgroup}"
        self.role_index: int | None = None  # warpgroup_index inside the current role
        self.elected: int | None = None  # inside elect_one: the threads elected (1, or 4 per warp)
        self.env: dict[Value, Any] = {}
        self.walked: dict[int, int] = {}   # running sums of `walked` ops, by id(op)

    @property
    def threads(self) -> int:
        """How many threads execute the current op (arrivals count per thread)."""
        return WARPGROUP if self.elected is None else self.elected

    @property
    def machine(self) -> Machine:
        return self.block.machine

    def value(self, operand):
        if isinstance(operand, Value):
            try:
                return self.env[operand]
            except KeyError:
                raise InterpretError(f"value %{operand.name} used before it is defined") from None
        return operand

    def run_block(self, block: Block, bindings=()):
        for arg, val in zip(block.args, bindings):
            self.env[arg] = val
        for op in block.ops:
            yield from self.run_op(op)

    def run_op(self, op: Op):
        rule = (EXACT_RULES.get(op.opcode) if self.block.exact else None) or RULES.get(op.opcode)
        if rule is None:
            raise InterpretError(f"{op.loc}: the interpreter has no rule for {op.opcode!r}")
        args = [self.value(o) for o in op.operands]
        try:
            out = yield from rule(self, op, args)
        except InterpretError:
            raise
        except (ValueError, TypeError, KeyError, IndexError, ZeroDivisionError) as e:
            raise InterpretError(f"{op.loc}: {op.opcode}: {e}") from e
        if op.results:
            outs = out if len(op.results) > 1 else (out,)
            for res, val in zip(op.results, outs):
                self.env[res] = val


@dataclass
class InterpretResult:
    """Final global tensors (decoded to fp32/int32 values) and each block's machine run."""
    outputs: dict[str, np.ndarray]
    runs: dict[int, RunResult]

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.runs.values())

    def failures(self) -> list[str]:
        """One line per failed run (a cluster's run is reported once, by its first block)."""
        seen: set[int] = set()
        out = []
        for b, r in self.runs.items():
            if not r.ok and id(r) not in seen:
                seen.add(id(r))
                out.append(f"block {b}: {r}")
        return out


def bind_symbols(kernel: Kernel, inputs: dict[str, np.ndarray]) -> dict[str, int]:
    """Shape symbols from the input arrays' shapes and the ints given for the size
    parameters (`SQ: Dim`, by name); a conflict names both arguments."""
    symbols: dict[str, int] = {}
    where: dict[str, str] = {}
    for name in kernel.size_params:
        n = inputs.get(name)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
            raise InterpretError(f"size {name} of kernel {kernel.name} must be a positive "
                                 f"int, got {n!r}; pass {name}=<int> with the tensors")
        symbols[name], where[name] = int(n), f"size {name}"
    for p in kernel.params:
        if not isinstance(p.type, GlobalTensorType):
            continue
        shape = np.shape(inputs[p.name])
        if len(shape) != len(p.type.shape):
            raise InterpretError(f"input {p.name} has rank {len(shape)}, the kernel declares "
                                 f"{p.name}{list(p.type.shape)}; pass an array of that rank")
        for dim, n in zip(p.type.shape, shape):
            if isinstance(dim, int):
                if dim != n:
                    raise InterpretError(f"input {p.name} has extent {n} where the kernel "
                                         f"declares {dim}; pass shape {p.type.shape}")
            elif dim in symbols and symbols[dim] != n:
                raise InterpretError(f"symbol {dim} is {symbols[dim]} from {where[dim]} but "
                                     f"{n} from {p.name}; make the shapes agree")
            else:
                symbols[dim], where[dim] = n, p.name
    return symbols


def _tensors(kernel: Kernel, inputs) -> dict[str, GlobalTensor]:
    names = [p.name for p in kernel.params if isinstance(p.type, GlobalTensorType)]
    missing = [n for n in names + list(kernel.size_params) if n not in inputs]
    if missing:
        raise InterpretError(f"missing inputs {missing} for kernel {kernel.name}; pass every "
                             f"tensor parameter (outputs too: they are written in place)")
    extra = sorted(set(inputs) - set(names) - set(kernel.size_params))
    if extra:
        raise InterpretError(f"unknown inputs {extra}; kernel {kernel.name} takes "
                             f"{names + list(kernel.size_params)}")
    return {p.name: GlobalTensor.from_values(p.name, inputs[p.name], machine_dtype(p.type.dtype))
            for p in kernel.params if isinstance(p.type, GlobalTensorType)}


def _allocate(state: BlockState) -> None:
    """Create every smem buffer and mbarrier array of the kernel (uninitialised barriers);
    in a cluster of several blocks their names carry the CTA (cta1.full[0])."""
    m, cluster = state.machine, state.cluster
    for op in state.kernel.walk():
        name = f"{state.prefix}{op.result.name}" if op.results else ""
        if op.opcode == "smem.alloc":
            a = op.attrs
            buf = m.smem.alloc(name, machine_dtype(a["dtype"]), tuple(a["shape"]),
                               stages=a["stages"], swizzle=a.get("swizzle", "none"))
            state.allocs[id(op)] = buf
            cluster.remember(buf, id(op))
        elif op.opcode == "mbarrier.alloc":
            bars = m.mbarriers(name, op.attrs["count"])
            state.allocs[id(op)] = bars
            for i, bar in enumerate(bars):
                cluster.remember(bar, id(op), i)


def interpret(kernel: Kernel, inputs: dict[str, np.ndarray], seed: int = 0,
              blocks=None, mode: str = "value", reverse_blocks: bool = False,
              **machine_options) -> InterpretResult:
    """Run `kernel` on `inputs` (every tensor parameter, by name, and an int for each size
    parameter); `blocks` bounds the grid
    to those linear block indices (default: all; a cluster runs whole, so naming one of its
    blocks runs them all). Each cluster's machine seed derives from `seed` and its first
    block, so one seed replays the whole launch. `mode` is "value" (logical tiles) or
    "exact" (per-thread registers, swizzled shared-memory bytes). Clusters run one after
    another, in block order, or the other way round with `reverse_blocks` (a block that
    reads what another block writes, unsynchronised, gets another value in one of the two
    orders: the GPU orders blocks in neither)."""
    if mode not in MODES:
        raise InterpretError(f"unknown interpreter mode {mode!r}; use one of {MODES}")
    exact = mode == "exact"
    tensors = _tensors(kernel, inputs)
    symbols = bind_symbols(kernel, inputs)
    grid = tuple(eval_extent(g, symbols, kernel.constants) for g in kernel.launch.grid)
    total = int(np.prod(grid))
    indices = range(total) if blocks is None else list(blocks)
    if reverse_blocks:
        indices = list(reversed(list(indices)))
    threads = kernel.launch.block
    if threads % WARPGROUP:
        raise InterpretError(f"block={threads} is not a multiple of {WARPGROUP} threads; the "
                             f"interpreter runs one agent per warpgroup")
    for b in indices:
        if not 0 <= b < total:
            raise InterpretError(f"block {b} is outside the grid of {total} blocks")
    size = check_cluster(grid, kernel.launch.cluster)
    options = dict(machine_options)
    if size > 1:
        # a peer's multicast may land before this CTA's expect_tx (tx-count goes negative)
        options.setdefault("strict_tx", False)
        options.setdefault("smem_bytes", size * SMEM_PER_SM)
    runs: dict[int, RunResult] = {}
    for members in group_blocks(indices, grid, kernel.launch.cluster):
        block_seed = zlib.crc32(f"{seed}:{members[0]}".encode())
        m = Machine(seed=block_seed, exact=exact, **options)
        cluster = ClusterState(m, size)
        agents = []
        for rank, b in enumerate(members):
            prefix = f"cta{rank}." if size > 1 else ""
            state = BlockState(kernel, m, tensors, symbols, b, grid, threads, exact=exact,
                               rank=rank, prefix=prefix, cluster=cluster)
            cluster.blocks[rank] = state
            _allocate(state)
            agents += [Agent(state, wg) for wg in range(threads // WARPGROUP)]
        cluster.barrier = m.cluster_barrier(len(agents))
        for agent in agents:
            m.spawn(agent.name, _program(agent, kernel))
        result = m.run()
        for b in members:
            runs[b] = result
    outputs = {name: t.values() for name, t in tensors.items()}
    return InterpretResult(outputs, runs)


def _program(agent: Agent, kernel: Kernel):
    for p in kernel.symbols:
        agent.env[p] = agent.block.symbols[p.name]
    for p in kernel.params:
        if p.name in agent.block.tensors:
            agent.env[p] = agent.block.tensors[p.name]
    yield from agent.run_block(kernel.body)
