"""Resource checks of a kernel against the Hopper limits (sm_90a; the numbers: argus.limits).

  resources.smem            shared memory per block <= 227 KB: every smem.alloc (stages
                            padded to the swizzle alignment, buffers aligned to it) plus
                            8 bytes per mbarrier
  resources.registers       each role's setmaxnreg budget in 24..256 and a multiple of 8;
                            all roles together fit the block's register pool (64K
                            registers, allocated at launch in steps of 8 per thread)
  resources.register-overflow  the fragments live at once in a role alone need more
                            registers than the role's own setmaxnreg budget: a certain
                            spill (the kernel's register plan contradicts itself), reported
                            at the allocation that takes the role over
  resources.register-spill  (warning) the fragments live at once in a role
                            (argus.verify.register_pressure), plus REGISTER_OVERHEAD for
                            what is not a fragment, fit the role's setmaxnreg budget (the
                            launch allocation, 65536 / threads per thread at most 255,
                            outside roles); past it ptxas spills to local memory: the
                            results stay right, the kernel slows (wgmma serialises), so
                            it is a warning, at the op that allocates the fragment that
                            takes the role over
  resources.cluster         at most 8 blocks per cluster (the portable limit), dividing the grid
  resources.tma-box         every TMA box is legal (argus.layout.hopper.tma.TmaBox), and the
                            global row strides are multiples of 16 B for every size the
                            kernel's assumptions allow (symbolic, z3)
  resources.index-overflow  tile coordinates times box sizes fit in int32 (symbolic, z3)
  resources.undecided       (warning) a coordinate the model cannot express, or a query the
                            solver gave up on: that tile's overflow check did not run
"""

from __future__ import annotations

from math import prod

import z3

from argus.ir.nodes import Kernel
from argus.ir.types import GlobalTileType, SmemTileType
from argus.layout import symbolic as sym
from argus.layout.hopper.tma import TmaBox, TmaError
from argus.limits import (MAX_CLUSTER_SIZE, MAX_REGISTERS_PER_THREAD, MBARRIER_BYTES,
                          REGISTER_GRANULE, REGISTERS_PER_SM, SETMAXNREG_MAX, SETMAXNREG_MIN,
                          SMEM_BASE_ALIGN, SMEM_PER_BLOCK, SMEM_PER_SM, WARPGROUP_THREADS,
                          registers_at_entry, smem_fits_sm)
from argus.verify.register_pressure import fragment_registers, pressure

SWIZZLE_SPAN = {"32B": 32, "64B": 64, "128B": 128}
from argus.verify.finding import Counterexample, Finding
from argus.verify.protocol import smt
from argus.verify.protocol.model import Model, build
from argus.verify.protocol.report import counterexample, finding
from argus.verify.protocol.smt import SolverUnknown
from argus.verify.protocol.terms import UnknownTerm

SWIZZLE_ALIGN = {"none": 128, "32B": 256, "64B": 512, "128B": 1024}
INT32_MAX = (1 << 31) - 1
# Registers per thread a role needs beyond its live fragments (addresses, descriptors, loop
# counters, barrier parities, ptxas temporaries). Measured with ptxas 13.0 on
# examples/gemm.py's consumer role holding extra wgmma accumulators across the k loop:
# at setmaxnreg 232, fragments of 204 registers compile with no spill and 208 spill 256 B;
# at 240, 208 fit and 224 spill 512 B. 28 is the headroom both need (232 - 204).
REGISTER_OVERHEAD = 28


def check(kernel: Kernel) -> list[Finding]:
    m = build(kernel)
    return (_smem(m) + _registers(m) + _fragment_registers(m) + _cluster(m) + _tma(m)
            + _index_overflow(m))


def _round_up(x: int, a: int) -> int:
    return -(-x // a) * a


def smem_bytes(kernel: Kernel) -> tuple[int, list[tuple[object, int]]]:
    """Total bytes and (alloc op, bytes) per allocation, in allocation order."""
    offset, parts = 0, []
    for op in kernel.walk():
        if op.opcode == "smem.alloc":
            t = op.result.type
            align = SWIZZLE_ALIGN.get(t.swizzle, 128)
            size = t.stages * _round_up(t.nbytes_per_stage, align)
            offset = _round_up(offset, align) + size
            parts.append((op, size))
        elif op.opcode == "mbarrier.alloc":
            size = op.attrs["count"] * MBARRIER_BYTES
            offset = _round_up(offset, MBARRIER_BYTES) + size
            parts.append((op, size))
    return offset, parts


def _smem(m: Model) -> list:
    total, parts = smem_bytes(m.kernel)
    occupancy = m.kernel.launch.blocks_per_sm
    if total <= SMEM_PER_BLOCK and smem_fits_sm(total + SMEM_BASE_ALIGN, occupancy):
        return []
    biggest = max(parts, key=lambda p: p[1])[0]
    if total <= SMEM_PER_BLOCK:
        return [finding(
            "resources.smem", biggest,
            f"blocks_per_sm={occupancy}: {occupancy} blocks of {total} B of shared memory "
            f"(with {SMEM_BASE_ALIGN} B of alignment slack each) do not fit the SM's "
            f"{SMEM_PER_SM} B", "use fewer blocks per SM, fewer stages or smaller tiles",
            Counterexample(smem_byte=total))]
    listing = ", ".join(f"{op.result.name} {size // 1024} KB" if size >= 1024 else
                        f"{op.result.name} {size} B" for op, size in parts)
    return [finding(
        "resources.smem", biggest,
        f"the block needs {total} B of shared memory ({listing}), over the {SMEM_PER_BLOCK} B "
        f"({SMEM_PER_BLOCK // 1024} KB) a Hopper block can have",
        "use fewer stages or smaller tiles (e.g. "
        "stages=S-1)", Counterexample(smem_byte=total))]


def register_pool(threads: int, blocks_per_sm: int = 1) -> int:
    """Registers the block holds after launch (setmaxnreg's pool): per-thread allocation in
    steps of 8, at most 256 a thread (255 addressable), the register file shared by
    `blocks_per_sm` blocks."""
    return registers_at_entry(threads, blocks_per_sm) * threads


def _legal_budget(regs: int) -> int:
    """The nearest setmaxnreg count at or below `regs` (at least the minimum)."""
    down = regs // REGISTER_GRANULE * REGISTER_GRANULE
    return max(SETMAXNREG_MIN, min(SETMAXNREG_MAX, down))


def _registers(m: Model) -> list:
    out = []
    launch = m.kernel.launch
    threads = launch.block
    pool = register_pool(threads, launch.blocks_per_sm)
    covered, total = set(), 0
    role_ops = {op.attrs["name"]: op for op in m.kernel.walk() if op.opcode == "role"}
    for role in launch.roles:
        anchor = role_ops.get(role.name)
        if not (SETMAXNREG_MIN <= role.regs <= SETMAXNREG_MAX) or role.regs % REGISTER_GRANULE:
            out.append(Finding(
                "resources.registers", "error",
                f"role {role.name} asks for {role.regs} registers per thread; setmaxnreg "
                f"takes {SETMAXNREG_MIN}..{SETMAXNREG_MAX} in steps of {REGISTER_GRANULE}",
                role.loc, "role", f"regs={_legal_budget(role.regs)}"))
        covered |= set(role.warpgroups)
        total += role.regs * WARPGROUP_THREADS * len(role.warpgroups)
    if not launch.roles:
        return out
    rest = threads // WARPGROUP_THREADS - len(covered)
    total += rest * WARPGROUP_THREADS * (pool // threads)
    if total > pool:
        parts = " + ".join(f"{r.regs} x {WARPGROUP_THREADS * len(r.warpgroups)} ({r.name})"
                           for r in launch.roles)
        biggest = max(launch.roles, key=lambda r: r.regs * len(r.warpgroups))
        out.append(Finding(
            "resources.registers", "error",
            f"the roles ask for {parts} = {total} registers, but a block of {threads} "
            f"threads holds {pool} ({pool // threads} per thread at launch, of the "
            f"{REGISTERS_PER_SM} register file shared by {launch.blocks_per_sm} block(s)): "
            "setmaxnreg.inc would wait forever",
            biggest.loc, "role", f"lower the budgets so they sum to <= {pool}, e.g. a "
            f"producer at {SETMAXNREG_MIN}", Counterexample(warpgroup=biggest.warpgroups[0])))
    return out


def launch_registers(threads: int, blocks_per_sm: int = 1) -> int:
    """Registers per thread at launch (what code outside every role runs with)."""
    return min(MAX_REGISTERS_PER_THREAD, registers_at_entry(threads, blocks_per_sm))


def _fragment_registers(m: Model) -> list:
    kernel = m.kernel
    threads = kernel.launch.block
    pr = pressure(kernel)
    out = []
    for role in pr.scopes():
        budget = launch_registers(threads, m.kernel.launch.blocks_per_sm) if role is None else \
            min(MAX_REGISTERS_PER_THREAD, int(role.attrs["regs"]))
        who = f"role {role.attrs['name']}" if role is not None else "the code outside roles"
        where = (f"its setmaxnreg budget of {budget}" if role is not None else
                 f"the {budget} a thread of a {threads}-thread block gets at launch")
        certain = pr.first_over(role, budget) if role is not None else None
        if certain is not None:
            # the fragments alone do not fit the budget the role itself asks for: not an
            # estimate, ptxas must spill them (outside roles the launch allocation is not a
            # budget the kernel states, and the advisory estimate below speaks)
            value, alloc = pr.newest(certain)
            out.append(finding(
                "resources.register-overflow", alloc,
                f"{who} holds fragments of {certain.regs} registers per thread at once at "
                f"line {certain.op.loc.line} ({_listing(pr, certain)}), over {where} before "
                "a single address or counter is counted: they cannot all live in registers, "
                "so ptxas spills them to local memory and serialises the wgmma",
                _spill_hint(m, role, certain.regs + REGISTER_OVERHEAD, value, alloc),
                Counterexample(warpgroup=_first_warpgroup(role))))
            continue
        point = pr.first_over(role, budget - REGISTER_OVERHEAD)
        if point is None:
            continue
        value, alloc = pr.newest(point)
        listing = _listing(pr, point)
        need = point.regs + REGISTER_OVERHEAD
        out.append(finding(
            "resources.register-spill", alloc,
            f"{who} holds fragments of {point.regs} registers per thread at once at line "
            f"{point.op.loc.line} ({listing}); with about {REGISTER_OVERHEAD} more for "
            f"addresses and counters that is {need}, over {where}: ptxas will spill to "
            "local memory (the results stay right, the kernel slows)",
            _spill_hint(m, role, need, value, alloc),
            Counterexample(warpgroup=_first_warpgroup(role)), severity="warning"))
    return out


def _listing(pr, point) -> str:
    return ", ".join(f"{_display(v)} {fragment_registers(v.type)} (line "
                     f"{pr.defined_at[v][1].loc.line})" for v in point.held)


def _display(v) -> str:
    """A fragment by its source name, or 'a temporary' for an unnamed intermediate."""
    name = v.name.split(".", 1)[0]
    return "a temporary" if name.isdigit() else name


def _spill_hint(m: Model, role, need: int, value, alloc) -> str:
    name = _display(value)
    shape = " x ".join(str(d) for d in value.type.shape)
    smaller = (f"hold fewer registers at once: a narrower tile than {shape} for {name} "
               f"(line {alloc.loc.line}), fewer accumulators, or finish with a fragment "
               "before the next is allocated")
    if role is None:
        return smaller
    regs = _round_up(need, REGISTER_GRANULE)
    launch = m.kernel.launch
    others = sum(r.regs * WARPGROUP_THREADS * len(r.warpgroups) for r in launch.roles
                 if r.name != role.attrs["name"])
    mine = regs * WARPGROUP_THREADS * len(role.attrs["warpgroups"])
    if regs <= SETMAXNREG_MAX and others + mine <= register_pool(launch.block,
                                                                 launch.blocks_per_sm):
        return f"raise the role's budget to regs={regs}, or {smaller}"
    return smaller


def _first_warpgroup(role):
    return tuple(role.attrs["warpgroups"])[0] if role is not None else 0


def _cluster(m: Model) -> list:
    c = m.kernel.launch.cluster
    out = []
    size = prod(c)
    if size > MAX_CLUSTER_SIZE:
        out.append(Finding("resources.cluster", "error",
                           f"cluster={tuple(c)} has {size} blocks; Hopper clusters hold at "
                           f"most {MAX_CLUSTER_SIZE} (portable)", m.kernel.loc, "kernel",
                           f"use a cluster of <= {MAX_CLUSTER_SIZE} blocks, e.g. (2, 1, 1)"))
    for axis, (g, k) in enumerate(zip(m.kernel.launch.grid, c)):
        if str(g).isdigit() and int(g) % k:
            out.append(Finding("resources.cluster", "error",
                               f"grid dim {axis} is {g}, not a multiple of the cluster's {k}",
                               m.kernel.loc, "kernel", f"make the grid a multiple of {k}"))
    return out


def _tma(m: Model) -> list:
    out = []
    checked = set()
    for e in m.opcode("tma.load", "tma.store"):
        dst, src = e.op.arg("dst"), e.op.arg("src")       # the global tile and the smem one
        g, s = (src, dst) if e.op.opcode == "tma.load" else (dst, src)
        if not (isinstance(g.type, GlobalTileType) and isinstance(s.type, SmemTileType)):
            continue
        elem = g.type.dtype.bits // 8
        box = tuple(reversed(g.type.shape))           # TMA dim 0 is the contiguous one
        span = SWIZZLE_SPAN.get(s.type.swizzle)
        if span and len(box) == 2 and box[0] * elem > span \
                and (box[0] * elem) % span == 0:
            # the backend issues one box per swizzle-span column chunk of the tile
            # (docs/design/codegen.md, "the tile convention"): check the box it issues
            box = (span // elem, box[1])
        strides = [elem]
        for b in box[:-1]:
            strides.append(_round_up(strides[-1] * b, 16))
        try:
            TmaBox(elem, box, tuple(strides), box, s.type.swizzle)
        except TmaError as err:
            out.append(finding("resources.tma-box", e.op, f"this TMA box is illegal: {err}",
                               "choose a box the tensor map accepts (see the message)"))
        tensor = next((p for p in m.kernel.params if p.name == g.type.tensor), None)
        if tensor is None or tensor.name in checked:
            continue
        checked.add(tensor.name)
        out += _strides(m, e, tensor, elem)
    return out


def _strides(m: Model, e, tensor, elem) -> list:
    shape = tensor.type.shape
    stride = elem
    for d in range(len(shape) - 1, 0, -1):
        dim = shape[d] if isinstance(shape[d], int) else m.terms.env[_symbol(m, shape[d])]
        stride = m.terms.mul(stride, dim)
        if not sym.is_symbolic(stride):
            if stride % 16:
                out = finding("resources.tma-box", e.op,
                              f"{tensor.name}'s dim {d - 1} has a stride of {stride} B; TMA "
                              "needs multiples of 16 B", "pad the leading dimension")
                return [out]
            continue
        bad = z3.Not(smt.eq(sym.umod(smt.as_term(stride), 16), 0))
        found = smt.find(m.constraints, bad, [m.terms.env[s] for s in m.kernel.symbols])
        if found is not None:
            sizes = {s.name: smt.value(found, m.terms.env[s]) for s in m.kernel.symbols}
            return [finding(
                "resources.tma-box", e.op,
                f"{tensor.name}'s rows are {' x '.join(map(str, shape[d:]))} x {elem} B apart, "
                "not a multiple of 16 B for every size the assumptions allow (TMA needs it)",
                f"add assume({shape[d]} % {max(1, 16 // elem)} == 0) or pad the rows",
                Counterexample(sizes=sizes))]
    return []


def _symbol(m: Model, name: str):
    return next(s for s in m.kernel.symbols if s.name == name)


def _index_overflow(m: Model) -> list:
    out = []
    for e in m.opcode("tile"):
        t = e.op.result.type
        if not isinstance(t, GlobalTileType):
            continue
        for d, (c, b) in enumerate(zip(e.op.args("coords"), t.shape)):
            try:
                coord = m.terms.of(c)
            except UnknownTerm as err:      # not expressible: say so, never skip silently
                out.append(_undecided(e, d, f"its coordinate is not modelled ({err})"))
                continue
            if not sym.is_symbolic(coord):
                if coord * b + b - 1 > INT32_MAX:
                    out.append(_overflow(m, e, d, None))
                continue
            wide = z3.ZeroExt(32, smt.as_term(coord)) * b + (b - 1)
            try:
                found = smt.find(m.constraints + list(e.where.conds),
                                 z3.UGT(wide, z3.BitVecVal(INT32_MAX, 64)),
                                 [l.counter for l in e.where.loops],
                                 prefer=m.first_iteration(e.where))
            except SolverUnknown as err:
                out.append(_undecided(e, d, f"the solver gave up ({err})"))
                continue
            if found is not None:
                out.append(_overflow(m, e, d, found))
    return out


def _undecided(e, d: int, why: str) -> Finding:
    t = e.op.result.type
    return finding("resources.undecided", e.op,
                   f"whether element indices of this {t.tensor} tile along dim {d} fit in "
                   f"int32 is not decided: {why}; the index-overflow check did not run here",
                   "write the tile coordinates as index arithmetic on sizes, ids and loop "
                   "counters (or bound them with assume(...))", severity="warning")


def _overflow(m: Model, e, d, found) -> Finding:
    t = e.op.result.type
    return finding("resources.index-overflow", e.op,
                   f"element indices of this {t.tensor} tile along dim {d} can exceed "
                   f"2^31 - 1: the int32 coordinates of the copy wrap",
                   "bound the tile coordinates (assume(...) on the sizes) so they stay in range",
                   counterexample(m, found, e.where))
