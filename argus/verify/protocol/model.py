"""The protocol model of a kernel: every op with where it runs (role, loop nest, elect
scope, branch conditions) and its scalar operands as z3 terms.

A role's *step* at an op is the linear iteration count of the loops around it,
n = ((j1 * trip2 + j2) * trip3 + j3) ..., the same formula for every role; two ops in two
roles at the same step n are the producer's and the consumer's halves of one pipeline
step when their loop nests have the same trip counts (`Nest.signature`).

That formula holds only where each trip count is the same in every iteration of the loops
around it. A loop directly inside a persistent `schedule` whose trip varies from tile to
tile (a causal attention tile's key blocks) is numbered by the sum of its trips over the
block's earlier tiles, W, one variable per (schedule, trip) that `walked(trip)` in the
kernel also denotes: step W + j. Any other varying trip leaves the nest's steps unnumbered
(`Model.numbered` is False there: its ring ops are reported as not modelled, never proved
with a wrong count). The schedule's step counter and tile coordinates are one set of
variables per schedule (same extents, order, group) in every role, so the roles' trips
computed from the tile are one term.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

import z3

from argus.ir.nodes import Block, Kernel, Op, Value
from argus.ir.types import BarrierArrayType, ScalarType, SmemBufferType
from argus.layout import symbolic as sym

from argus.verify import quotients

from . import fanout, smt
from .terms import STEP_BOUND, SIZE_BOUND, Terms, UnknownTerm

WARPGROUP = 128


@dataclass(frozen=True, eq=False)
class Loop:
    op: Op
    name: str            # the user's loop variable (k, i)
    counter: Any         # 0-based iteration counter term
    trip: Any            # trip count (int or term)
    key: Any             # what makes two loops "the same" across roles
    binds: tuple = ()    # the terms it binds: its counter (a schedule: and tile coordinates)


@dataclass(frozen=True, eq=False)
class RoleInfo:
    name: str
    warpgroups: tuple[int, ...]
    regs: int
    op: Op


@dataclass(frozen=True, eq=False)
class Where:
    role: Optional[RoleInfo]
    loops: tuple[Loop, ...]
    elect: Optional[str]
    conds: tuple = ()
    filtered: bool = False   # under an `if` inside a loop: not every iteration runs it
    fanout: tuple = ()       # loops of arrivals around it (fanout.py): not steps

    @property
    def signature(self) -> tuple:
        return tuple(l.key for l in self.loops)

    def executions(self, block_threads: int) -> int:
        """How many threads execute an op here, per block, per step (per iteration of
        its fan-out loops, which fanout.py enumerates)."""
        if self.elect == "block":
            return 1
        # outside roles every warpgroup of the block runs the op
        wgs = len(self.role.warpgroups) if self.role else block_threads // WARPGROUP
        per_wg = {"warpgroup": 1, "warp": 4, None: WARPGROUP}[self.elect]
        return per_wg * wgs


@dataclass(eq=False)
class Event:
    op: Op
    where: Where
    order: int


@dataclass(frozen=True, eq=False)
class BarRef:
    array: Value
    index: Any


@dataclass(frozen=True, eq=False)
class SmemRef:
    buffer: Value
    stage: Any
    origin: tuple = ()      # element offset of a sub-tile within the stage (terms)
    shape: tuple = ()


@dataclass
class Model:
    kernel: Kernel
    terms: Terms
    events: list[Event] = field(default_factory=list)
    roles: list[RoleInfo] = field(default_factory=list)
    bars: dict[Value, BarRef] = field(default_factory=dict)
    smem: dict[Value, SmemRef] = field(default_factory=dict)
    arrays: dict[Value, Op] = field(default_factory=dict)     # mbarrier.alloc results
    buffers: dict[Value, Op] = field(default_factory=dict)    # smem.alloc results
    unknown: list[tuple[Op, str]] = field(default_factory=list)
    walked_sums: dict = field(default_factory=dict)    # (schedule key, trip key) -> W
    unnumbered: dict = field(default_factory=dict)     # id(Where) -> (Where, fresh step)

    @property
    def constraints(self) -> list:
        return self.terms.constraints

    @property
    def cluster_size(self) -> int:
        c = self.kernel.launch.cluster
        return c[0] * c[1] * c[2]

    def executions(self, where: Where) -> int:
        return where.executions(self.kernel.launch.block)

    def of_role(self, role: RoleInfo) -> list[Event]:
        return [e for e in self.events if e.where.role is role]

    def opcode(self, *names: str) -> list[Event]:
        return [e for e in self.events if e.op.opcode in names]

    def step(self, where: Where):
        n = 0
        for idx, loop in enumerate(where.loops):
            if idx and self.varies(loop.trip, where.loops[:idx]):
                if idx == 1 and where.loops[0].key[0] == "schedule":
                    n = _add(self.walked(where.loops[0], loop.trip), loop.counter)
                    continue
                return self._unnumbered(where)
            n = self.terms.mul(n, loop.trip) if not isinstance(n, int) or n else 0
            n = _add(n, loop.counter)
        return n

    def varies(self, trip, outer) -> bool:
        """Whether a trip count can differ between iterations of the loops `outer`."""
        return bool(self.terms.owners(trip) & {l.op for l in outer})

    def numbered(self, where: Where) -> bool:
        """Whether `step` counts this place's steps (see the module docstring)."""
        self.step(where)
        return id(where) not in self.unnumbered

    def _unnumbered(self, where: Where):
        """A step that no formula gives: a fresh variable, remembered as such."""
        if id(where) not in self.unnumbered:
            self.unnumbered[id(where)] = (where, self.terms.fresh("step", 0, STEP_BOUND))
        return self.unnumbered[id(where)][1]

    def walked(self, schedule: Loop, trip):
        """W: the sum of `trip` over the block's tiles of `schedule` before the current one
        (0 at the first); one variable per (schedule, trip), shared by the roles."""
        key = (schedule.key, _key(trip))
        if key not in self.walked_sums:
            w = self.terms.fresh("walked", 0, STEP_BOUND)
            self.terms.constraints.append(z3.Implies(smt.eq(schedule.counter, 0),
                                                     smt.eq(w, 0)))
            self.walked_sums[key] = w
        return self.walked_sums[key]

    def ring_step(self, where: Where, index, stages: int):
        """The step a ring op runs at: the loop count, or, under an `if` that skips
        iterations, the user's own counter g of a stage written g % S (trusted to count
        the steps that run: see docs/design/verifier-protocol.md). None when neither."""
        if not where.filtered:
            return self.step(where) if self.numbered(where) else None
        if stages == 1:
            return None
        t = smt.as_term(index) if z3.is_expr(index) else None
        if t is not None and t.decl().kind() in (z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I):
            d = t.arg(1)
            if z3.is_bv_value(d) and d.as_long() == stages:
                return t.arg(0)
        return None

    def first_iteration(self, where: Where) -> list:
        """Outer loop counters at 0: what a counterexample prefers (the first tile)."""
        return [smt.eq(l.counter, 0) for l in where.loops[:-1]]


def _add(a, b):
    from argus.layout import symbolic as sym
    return sym.add(smt.as_term(a) if sym.is_symbolic(a) else a,
                   smt.as_term(b) if sym.is_symbolic(b) else b)


def build(kernel: Kernel) -> Model:
    terms = Terms()
    m = Model(kernel, terms)
    for s in kernel.symbols:
        terms.bind(s, terms.fresh(s.name, 1, SIZE_BOUND))
    sizes = {s.name: terms.env[s] for s in kernel.symbols}
    for r, s in quotients.divisible_pairs(kernel):   # R // S is Q: no symbolic divider
        q = terms.fresh(f"{r}/{s}", 1, SIZE_BOUND)
        terms.constraints.append(sizes[r] == smt.as_term(terms.mul(q, sizes[s])))
        R, S = smt.as_term(sizes[r]), smt.as_term(sizes[s])
        terms.quotients[(R.get_id(), S.get_id())] = (R, S, q)
    _Walker(m).block(kernel.body, Where(None, (), None))
    for op in kernel.assumptions:
        c = op.arg("cond")
        cond = terms.env.get(c) if isinstance(c, Value) else None
        if cond is not None:
            terms.constraints.append(smt.bool_of(cond))
    return m


class _Walker:
    def __init__(self, m: Model):
        self.m = m
        self.t = m.terms
        self.order = 0
        self.schedule_trips: dict[tuple, Any] = {}
        self.schedule_vars: dict[tuple, tuple] = {}   # key -> (counter, coordinates, op)
        self.split: dict[int, Op] = {}      # first part of a split loop -> its second part
        self.parts: dict[int, tuple] = {}   # second part -> (the loop, the split point)

    def grid_extent(self, axis: str):
        """The grid's extent along axis as a term (block ids range below it)."""
        grid = self.m.kernel.launch.grid
        i = "xyz".index(axis)
        if i >= len(grid):
            return 1
        try:
            return _grid_term(str(grid[i]), self.m)
        except (UnknownTerm, SyntaxError, KeyError, ValueError):
            return SIZE_BOUND

    def block(self, block: Block, where: Where):
        saved = self.t.scope        # what is read here varies with the loops around it
        self.t.scope = frozenset(l.op for l in where.loops)
        for op, after in zip(block.ops, [*block.ops[1:], None]):
            if after is not None and self._continues(op, after):
                self.split[id(op)] = after
            self.op(op, where)
        self.t.scope = saved

    def _continues(self, first: Op, second: Op) -> bool:
        """`for j in range(nf)` then `for j in range(nf, nj)` (steps 1, the second starting
        at the first's stop, the same IR value): one loop over [0, nj) split in two, when
        0 <= nf <= nj for every admitted size (else the parts are not that union)."""
        if first.opcode != "for" or second.opcode != "for":
            return False
        stop = first.arg("stop")
        if not isinstance(stop, Value) or second.arg("start") is not stop or \
                first.arg("start") != 0 or first.arg("step") != 1 or second.arg("step") != 1:
            return False
        try:
            nf, nj = self.t.of(stop), self.t.of(second.arg("stop"))
        except UnknownTerm:
            return False
        inside = z3.And(smt.le(0, nf), smt.le(nf, nj)) if sym.is_symbolic(nf) or \
            sym.is_symbolic(nj) else 0 <= nf <= nj
        if isinstance(inside, bool):
            return inside
        # mostly true by how nf and nj are computed; the assumptions only when needed
        for facts in (self.t.constraints, self.t.constraints + self._assumed()):
            try:
                if smt.find(facts, z3.Not(inside)) is None:
                    return True
            except smt.SolverUnknown:
                continue                 # not proved: the parts stay two loops
        return False

    def _assumed(self) -> list:
        """The kernel's assumptions as far as the walk has rendered them."""
        out = []
        for op in self.m.kernel.assumptions:
            c = op.arg("cond")
            if isinstance(c, Value) and c in self.t.env:
                out.append(smt.bool_of(self.t.env[c]))
        return out

    def op(self, op: Op, where: Where):
        self.m.events.append(Event(op, where, self.order))
        self.order += 1
        code, t = op.opcode, self.t
        try:
            if code.startswith("arith."):
                t.bind(op.result, t.arith(op))
            elif code == "block_id":
                axis = op.attrs.get("axis", "x")
                t.bind(op.result, self._invariant(t.fresh(f"block_{axis}", 0,
                                                          self.grid_extent(axis))))
            elif code == "cluster_rank":
                t.bind(op.result, self._invariant(t.fresh("cluster_rank", 0,
                                                          self.m.cluster_size)))
            elif code == "warpgroup_index":
                n = len(where.role.warpgroups) if where.role else 1
                t.bind(op.result, self._invariant(t.fresh("warpgroup", 0, n)))
            elif code == "walked":
                self._walked(op, where)
            elif code == "mbarrier.alloc":
                self.m.arrays[op.result] = op
            elif code == "smem.alloc":
                self.m.buffers[op.result] = op
            elif code == "mbarrier.at":
                self.m.bars[op.result] = BarRef(op.arg("array"), t.of(op.arg("index")))
            elif code == "smem.stage":
                buf = op.arg("buffer")
                self.m.smem[op.result] = SmemRef(buf, t.of(op.arg("stage")), (0, 0),
                                                 tuple(buf.type.shape))
            elif code == "smem.tile":
                base = self.m.smem.get(op.arg("view"))
                if base is not None:
                    box = tuple(op.attrs.get("box", op.result.type.shape))
                    origin = tuple(_add(o, t.mul(t.of(c), b)) for o, c, b in
                                   zip(base.origin, op.args("coords"), box))
                    self.m.smem[op.result] = SmemRef(base.buffer, base.stage, origin, box)
        except UnknownTerm as e:
            self.m.unknown.append((op, str(e)))
        for r in op.results:    # data-dependent scalars (indices.element, ...): any value
            if isinstance(r.type, ScalarType) and r not in t.env:
                t.bind(r, t.fresh(_display(r.name), 0, SIZE_BOUND))
        for_regions = self.regions(op, where)
        if for_regions is not None:
            for region, inner in for_regions:
                self.block(region, inner)

    def _invariant(self, v):
        """An id: the same in every iteration of the loops it is read in."""
        self.t.owner.pop(v.get_id(), None)
        return v

    def _walked(self, op: Op, where: Where):
        """walked(w) directly in a schedule's body (the frontend's rule): the W that numbers
        a loop of trip w in that body (Model.walked)."""
        schedule = where.loops[-1] if where.loops else None
        if schedule is None or schedule.key[0] != "schedule" or \
                smt.as_term(self.t.of(op.arg("iteration"))).get_id() != \
                smt.as_term(schedule.counter).get_id():
            raise UnknownTerm("walked outside the body of its schedule")
        self.t.bind(op.result, self.m.walked(schedule, self.t.of(op.arg("weight"))))

    def _owned(self, loop: Loop) -> Loop:
        """The loop's own variables vary with it."""
        for b in loop.binds:
            if sym.is_symbolic(b):
                self.t.owner[smt.as_term(b).get_id()] = \
                    self.t.owner.get(smt.as_term(b).get_id(), frozenset()) | {loop.op}
        return loop

    def _split_part(self, op: Op, where: Where):
        """A part of a loop split in two (`_continues`): both parts are one Loop over [0, nj),
        counter j (the step is j, as in the producer's `for j in range(nj)`), the first part
        under j < nf and the second under nf <= j (branch conditions, not a filter: the step
        is still the loop count)."""
        t = self.t
        arg = op.regions[0].args[0]
        if id(op) in self.split:
            nf = t.of(op.arg("stop"))
            trip = t.of(self.split[id(op)].arg("stop"))
            counter = t.fresh(_display(arg.name), 0, trip)
            t.constraints.append(smt.lt(counter, STEP_BOUND))
            loop = self._owned(Loop(op, _display(arg.name), counter, trip, ("for", _key(trip)),
                                    (counter,)))
            self.parts[id(self.split[id(op)])] = (loop, nf)
            part = smt.lt(counter, nf)
        else:
            loop, nf = self.parts[id(op)]
            part = z3.Not(smt.lt(loop.counter, nf))
        part = z3.BoolVal(part) if isinstance(part, bool) else part
        t.bind(arg, loop.counter)
        return [(op.regions[0], replace(where, loops=where.loops + (loop,),
                                        conds=where.conds + (part,)))]

    def regions(self, op: Op, where: Where):
        code, t = op.opcode, self.t
        if code == "role":
            a = op.attrs
            role = RoleInfo(a["name"], tuple(a["warpgroups"]), a["regs"], op)
            self.m.roles.append(role)
            return [(op.regions[0], replace(where, role=role))]
        if code == "elect_one":
            return [(op.regions[0], replace(where, elect=op.attrs.get("scope", "warpgroup")))]
        if code == "if":
            try:
                cond = smt.bool_of(t.of(op.arg("cond")))
            except UnknownTerm:
                cond = z3.Bool(f"cond@{op.loc.line}")
            filtered = where.filtered or bool(where.loops)
            out = [(op.regions[0], replace(where, conds=where.conds + (cond,),
                                           filtered=filtered))]
            if len(op.regions) > 1:
                out.append((op.regions[1], replace(where, conds=where.conds + (z3.Not(cond),),
                                                   filtered=filtered)))
            return out
        if code == "for" and fanout.trip(op, t) is not None:
            # a loop of arrivals (one per block of the cluster): not a step
            arg = op.regions[0].args[0]
            counter = t.fresh(_display(arg.name), 0, fanout.trip(op, t))
            t.bind(arg, _add(t.of(op.arg("start")), t.mul(counter, t.of(op.arg("step")))))
            loop = Loop(op, _display(arg.name), counter, fanout.trip(op, t), ("fanout",))
            return [(op.regions[0], replace(where, fanout=where.fanout + (loop,)))]
        if code == "for" and (id(op) in self.split or id(op) in self.parts):
            return self._split_part(op, where)
        if code == "for":
            try:
                start, stop, step = (t.of(op.arg(n)) for n in ("start", "stop", "step"))
            except UnknownTerm:
                start, stop, step = 0, t.fresh("trip", 1, STEP_BOUND), 1
            arg = op.regions[0].args[0]
            if all(isinstance(x, int) for x in (start, stop, step)):
                trip = max(0, -(-(stop - start) // step))
            elif start == 0 and step == 1:
                trip = stop
            else:       # one trip for every loop of these bounds (producer and consumer)
                key = ("range", _key(start), _key(stop), _key(step))
                if key not in self.schedule_trips:
                    self.schedule_trips[key] = t.fresh(f"trip_{arg.name}", 1, STEP_BOUND)
                    # it varies with what its bounds vary with, not with the loops it is
                    # first met in (invariant bounds: one trip in every iteration)
                    t.owner[self.schedule_trips[key].get_id()] = \
                        t.owners(start) | t.owners(stop) | t.owners(step)
                trip = self.schedule_trips[key]
            counter = t.fresh(_display(arg.name), 0, trip)
            t.constraints.append(smt.lt(counter, STEP_BOUND))
            t.bound(counter, STEP_BOUND)
            value = counter if (start == 0 and step == 1) else _add(start, t.mul(counter, step))
            if not isinstance(trip, int) and not (start == 0 and step == 1):
                # a strided loop (range(bid, NT, BLOCKS)): its trip is a fresh count, so
                # the counter's value stays below stop by this fact, not by the trip
                t.constraints.append(smt.lt(value, stop))
            t.bind(arg, value)
            loop = self._owned(Loop(op, _display(arg.name), counter, trip, ("for", _key(trip)),
                                    (counter,)))
            return [(op.regions[0], replace(where, loops=where.loops + (loop,)))]
        if code == "schedule":
            args = op.regions[0].args
            extents = []
            for o in op.args("extents"):
                try:
                    extents.append(t.of(o))
                except UnknownTerm:
                    extents.append(t.fresh("extent", 1, SIZE_BOUND))
            key = ("schedule", tuple(_key(e) for e in extents), op.attrs.get("order"),
                   op.attrs.get("group"), op.attrs.get("by"))
            if key not in self.schedule_trips:
                self.schedule_trips[key] = t.fresh("tiles_per_block", 1, STEP_BOUND)
            trip = self.schedule_trips[key]
            # one step counter and one set of tile coordinates per schedule, whichever role
            # walks it: the n-th tile of the block is the same tile in every role
            if key not in self.schedule_vars:
                self.schedule_vars[key] = (
                    t.fresh(_display(args[0].name), 0, trip),
                    tuple(t.fresh(_display(a.name), 0, e) for a, e in zip(args[1:], extents)),
                    op)
            counter, coords, first = self.schedule_vars[key]
            t.bind(args[0], counter)
            for a, c in zip(args[1:], coords):
                t.bind(a, c)
            loop = self._owned(Loop(first, _display(args[0].name), counter, trip, key,
                                    (counter, *coords)))
            return [(op.regions[0], replace(where, loops=where.loops + (loop,)))]
        if op.regions:
            return [(r, where) for r in op.regions]
        return None


def _grid_term(text: str, m: Model):
    """A grid extent written over shape symbols and constants ("M // BM") as a term."""
    import ast
    symbols = {s.name: m.terms.env[s] for s in m.kernel.symbols}
    names = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv",
             ast.Mod: "mod"}

    def conv(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name):
            if n.id in symbols:
                return symbols[n.id]
            value = m.kernel.constants.get(n.id)
            if isinstance(value, int):
                return value
            raise UnknownTerm(n.id)
        if isinstance(n, ast.BinOp) and type(n.op) in names:
            return m.terms.render(names[type(n.op)], conv(n.left), conv(n.right))
        raise UnknownTerm(ast.dump(n))
    return conv(ast.parse(text, mode="eval").body)


def _key(x):
    if isinstance(x, int):
        return x
    return smt.as_term(x).get_id()


def _display(name: str) -> str:
    """SSA names of a repeated source name get a suffix (k.1); show the user's name."""
    return name.split(".", 1)[0]


def array_count(array: Value) -> int:
    return array.type.count if isinstance(array.type, BarrierArrayType) else 1


def stages(buffer: Value) -> int:
    return buffer.type.stages if isinstance(buffer.type, SmemBufferType) else 1
