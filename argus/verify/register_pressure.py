"""Registers per thread that a kernel's live fragments hold, per role.

A fragment holds `values` elements per thread (its thread-value layout,
argus.layout.fragments); 32-bit registers hold one fp32/int32 element, two 16-bit ones
(bf16, fp16 pairs are packed), four 8-bit ones.

Liveness is the compiler's: backward over the structured IR, a fragment is live from its
definition to its last read on some path; an op that writes a fragment without reading
it (`assign(acc, 0.0)`) ends the old contents' range, so an accumulator zeroed at the top
of each tile is dead between the tile's last read and the next zeroing; a loop carries
what its next iteration reads. At each op the count is the fragments live after it plus
the ones it defines (the operands it reads for the last time are not counted).

What holds no registers of its own, as the code generator emits it:
- a view: `tag.add` and `frag.slice` name their source's registers (a use of the view
  is a use of the source);
- a streamed temporary: the result of an elementwise op read once, by an elementwise op
  or a row reduction of the same block (`row_sum(exp(x))`, `gate / (exp2(g) + 1)`), is
  computed element by element where it is read: it costs no array, and what it reads
  stays live until there.
Spills that come from the compiler's own scheduling (long transcendental chains unrolled
over many values) are not modelled.

What the count leaves out (scalars, addresses, loop counters, descriptors, the compiler's
temporaries) is the resource pass's stated overhead (argus.verify.resources).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Optional

from argus.ir.nodes import Block, Kernel, Op, Value
from argus.ir.ops import OPS
from argus.ir.types import FragmentType
from argus.layout.fragments import WARPGROUP, layout_of

LOOPS = ("for", "schedule")
REGISTER_BITS = 32


def fragment_registers(t: FragmentType) -> int:
    """32-bit registers one thread holds for a fragment of type t."""
    try:
        values = layout_of(t).values
    except ValueError:               # a layout without a table: elements dealt evenly
        values = -(-prod(int(d) for d in t.shape) // WARPGROUP)
    return -(-values * t.dtype.bits // REGISTER_BITS)


@dataclass(frozen=True)
class Point:
    """One op and the fragments held there (live after it, or defined by it)."""
    op: Op
    position: int                     # program order
    role: Optional[Op]                # the innermost role around it (None: outside roles)
    held: tuple[Value, ...]
    regs: int


@dataclass
class Pressure:
    points: list[Point]
    defined_at: dict[Value, tuple[int, Op]] = field(default_factory=dict)

    def scopes(self) -> list[Optional[Op]]:
        seen: list[Optional[Op]] = []
        for p in self.points:
            if p.role not in seen:
                seen.append(p.role)
        return seen

    def peak(self, role: Optional[Op]) -> Optional[Point]:
        here = [p for p in self.points if p.role is role]
        return max(here, key=lambda p: p.regs) if here else None

    def first_over(self, role: Optional[Op], limit: int) -> Optional[Point]:
        """The first op of the scope, in program order, where the fragments need more
        than `limit` registers per thread."""
        for p in sorted(self.points, key=lambda p: p.position):
            if p.role is role and p.held and p.regs > limit:
                return p
        return None

    def newest(self, point: Point) -> tuple[Value, Op]:
        """The fragment held at `point` allocated last (the one that tips it over)."""
        v = max(point.held, key=lambda v: self.defined_at[v][0])
        return v, self.defined_at[v][1]


def pressure(kernel: Kernel) -> Pressure:
    a = _Analysis(kernel)
    a.block(kernel.body, frozenset(), None)
    points = [Point(op, a.position[id(op)], role, held, regs)
              for op, role, held, regs in a.points.values()]
    return Pressure(sorted(points, key=lambda p: p.position), a.defined)


STREAMED_CONSUMERS = ("reduce.row",)      # besides elementwise ops
VIEWS = ("tag.add", "frag.slice")


def _elementwise(op: Op) -> bool:
    return op.opcode.startswith("math.") or op.opcode == "frag.coord"


class _Analysis:
    def __init__(self, kernel: Kernel):
        ops = list(kernel.walk())
        self.position: dict[int, int] = {id(op): i for i, op in enumerate(ops)}
        self.block_of: dict[int, int] = {}
        for op in ops:
            for r in op.regions:
                for inner in r.ops:
                    self.block_of[id(inner)] = id(r)
        for op in kernel.body.ops:
            self.block_of[id(op)] = id(kernel.body)
        self.alias: dict[Value, Value] = {}
        producer: dict[Value, Op] = {}
        for op in ops:
            for r in op.results:
                if not isinstance(r.type, FragmentType):
                    continue
                src = op.operands[0] if op.operands else None
                if op.opcode in VIEWS and isinstance(src, Value) and \
                        isinstance(src.type, FragmentType):
                    self.alias[r] = self.root(src)
                else:
                    producer[r] = op
        uses: dict[Value, list[Op]] = {}
        for op in ops:
            if op.opcode in VIEWS or op.opcode.startswith("tag."):
                continue                          # names registers, reads none
            for v in op.operands:
                if isinstance(v, Value) and self.root(v) in producer:
                    uses.setdefault(self.root(v), []).append(op)
        self.streamed: dict[Value, Op] = {}
        for v, op in producer.items():
            used = uses.get(v, [])
            if _elementwise(op) and len(used) == 1 and \
                    (_elementwise(used[0]) or used[0].opcode in STREAMED_CONSUMERS) and \
                    self.block_of.get(id(used[0])) == self.block_of.get(id(op)):
                self.streamed[v] = op
        self.defined: dict[Value, tuple[int, Op]] = {
            v: (self.position[id(op)], op) for v, op in producer.items()
            if v not in self.streamed}
        self.points: dict[int, tuple] = {}
        self._summaries: dict[int, tuple[frozenset, frozenset]] = {}

    def root(self, v: Value) -> Value:
        while v in self.alias:
            v = self.alias[v]
        return v

    def regs(self, values) -> int:
        return sum(fragment_registers(v.type) for v in values)

    def block(self, block: Block, live_out: frozenset, role) -> frozenset:
        """Walk `block` backwards from `live_out`, recording each op's pressure; return
        what is live at its entry. Each loop body is walked once, with what its next
        iteration reads (from the gen/kill summary), so the cost is linear in the IR."""
        live = live_out
        for op in reversed(block.ops):
            live = self.op(op, live, role)
        return live - frozenset(block.args)

    def op(self, op: Op, after: frozenset, role) -> frozenset:
        if self._silent(op):
            return after                 # computed where it is read / names its source
        inner = op if op.opcode == "role" else role
        defs = frozenset(r for r in op.results if r in self.defined)
        self._record(op, role, after | defs)
        reads, kills = self._effects(op)
        before = (after - defs - kills) | reads
        if not op.regions:
            return before
        if op.opcode in LOOPS:
            body = op.regions[0]
            gen, kill = self.summary(body)
            carried = gen | (after - kill)      # what an iteration reads of the next one
            return before | self.block(body, after | carried, inner)
        entries = [self.block(r, after, inner) for r in op.regions]
        if op.opcode == "if" and len(op.regions) == 2:
            return before | entries[0] | entries[1]
        return before | frozenset().union(*entries)      # a region that may not run

    def _silent(self, op: Op) -> bool:
        return any(r in self.streamed or r in self.alias for r in op.results)

    def summary(self, block: Block) -> tuple[frozenset, frozenset]:
        """(gen, kill) of a block: entry = gen | (live_out - kill) for any live_out."""
        key = id(block)
        if key not in self._summaries:
            gen, kill = frozenset(), frozenset()
            for op in reversed(block.ops):
                g, k = self._op_summary(op)
                gen, kill = g | (gen - k), k | kill
            args = frozenset(block.args)
            self._summaries[key] = (gen - args, kill)
        return self._summaries[key]

    def _op_summary(self, op: Op) -> tuple[frozenset, frozenset]:
        if self._silent(op):
            return frozenset(), frozenset()
        defs = frozenset(r for r in op.results if r in self.defined)
        reads, kills = self._effects(op)
        gen, kill = reads, defs | kills
        if not op.regions:
            return gen, kill
        if op.opcode in LOOPS:                   # entry = after | body(after)
            g, _ = self.summary(op.regions[0])
            return gen | g, frozenset()
        parts = [self.summary(r) for r in op.regions]
        g = frozenset().union(*(p[0] for p in parts))
        if op.opcode == "if" and len(op.regions) == 2:
            return gen | g, parts[0][1] & parts[1][1]
        return gen | g, frozenset()

    def _reads(self, v, out: set) -> None:
        """The fragments with registers that reading `v` reads (through views, and
        through streamed temporaries to what they are computed from)."""
        if not isinstance(v, Value):
            return
        v = self.root(v)
        if v in self.streamed:
            for w in self.streamed[v].operands:
                self._reads(w, out)
        elif v in self.defined:
            out.add(v)

    def _effects(self, op: Op):
        """Fragments the op reads, and those it overwrites without reading (their old
        contents die here)."""
        spec = OPS.get(op.opcode)
        names = [o.name for o in spec.operands] if spec else []
        reads, kills = set(), set()
        for i, v in enumerate(op.operands):
            name = names[min(i, len(names) - 1)] if names else ""
            root = self.root(v) if isinstance(v, Value) else None
            if spec is not None and name in spec.writes and name not in spec.reads \
                    and root in self.defined:
                kills.add(root)
            else:
                self._reads(v, reads)
        return frozenset(reads), frozenset(kills)

    def _record(self, op: Op, role, held: frozenset) -> None:
        regs = self.regs(held)
        old = self.points.get(id(op))
        if old is None or regs > old[3]:
            order = sorted(held, key=lambda v: self.defined[v][0])
            self.points[id(op)] = (op, role, tuple(order), regs)
