"""The abstract interpreter: walks a kernel's IR once for each role (all its warpgroups at
once, symmetric.py; else once per warpgroup), with
symbolic sizes, block ids, tile coordinates and loop counters, and gives each SSA value
an abstract value (argus.verify.tags.values). The op families' transfer rules and checks
live in their own modules; this one handles structure (roles, loops, schedules, elect,
if, assume) and scalars.

Two walks: the first only collects the TMA writers of every shared-memory buffer (the
producer may come after the consumer in program order); the second runs every rule.
Loops of the same kind, depth and bounds share their variables across roles, which is
what lets a consumer's step read the producer's step (see operands.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import z3

from argus.ir.nodes import Block, Kernel, Op, Value
from argus.ir.types import GlobalTensorType
from argus.verify import quotients, termscan
from argus.verify.finding import Finding
from argus.verify.query_limits import SMALL_TRIP
from argus.verify.smt import Context, below, bv

from . import cluster, origin, scalars
from .report import Undecided
from .schedule import prove_bijection
from .values import Barrier, FragTag, Fragment, Writer

WARPGROUP = 128


# the kinds of variable that keep their value from an accumulator's reset to its use when
# they are not counters of the loops accumulated since the reset (site_conditions)
FIXED_KINDS = frozenset({"size", "block", "tile", "iteration", "warpgroup"})

# exceptions a rule raises only by a bug of its own (never to say "not modelled")
DEFECTS = (TypeError, AttributeError, NameError, AssertionError, z3.Z3Exception)


@dataclass
class Frame:
    vars: list[str] = field(default_factory=list)
    waits: list[tuple[Barrier, object]] = field(default_factory=list)   # (barrier, loc)


@dataclass
class RoleContext:
    name: str
    warpgroups: tuple[int, ...]
    index: object             # warpgroup_index() in this walk: a constant, or a variable
                              # for every warpgroup at once (symmetric.py)

    @property
    def warpgroup(self):
        from .symmetric import warpgroup
        return warpgroup(self.warpgroups, self.index)


@dataclass
class ScheduleInfo:
    order: str
    group: int
    extents: tuple
    i: str
    coords: tuple[str, ...]
    blocks: object            # number of blocks walking it (int or term)
    walker: str = "block"     # its walker variable: "block", or "cluster" (by="cluster")


def split_loops(block: Block) -> dict[int, tuple[Op, Op]]:
    """Consecutive `for` loops of one block that split one range with step 1
    (`for j in range(nf)` then `for j in range(nf, nj)`: the second's start is the same IR
    value as the first's stop): id of each part -> (first part, last part). The walker
    gives the parts one counter over the whole range, each part's body walked with the
    counter inside its own range, so a step of either part meets the producer's loop over
    the whole range (the vacuity and protocol passes treat such loops as one as well)."""
    out: dict[int, tuple[Op, Op]] = {}
    run: list[Op] = []

    def close():
        if len(run) > 1:
            for part in run:
                out[id(part)] = (run[0], run[-1])

    for op in block.ops:
        if op.opcode == "for" and op.arg("step") == 1 and run and \
                isinstance(op.arg("start"), Value) and op.arg("start") is run[-1].arg("stop"):
            run.append(op)
            continue
        close()
        run = [op] if op.opcode == "for" and op.arg("step") == 1 else []
    close()
    return out


def display_name(value: Value) -> str:
    return re.sub(r"\.\d+$", "", value.name)


class Walker:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.ctx = Context()
        self.env: dict[Value, object] = {}
        self.frames: list[Frame] = [Frame()]
        self.path: list = []
        self.role: RoleContext | None = None
        self.phase = "collect"
        self.writers: list[Writer] = []
        self.stores: list = []
        self.smem_writes: list = []                  # register -> shared-memory stores
        self.tma_reads: list = []                    # TMA stores (read after the walk)
        self.reductions: list = []                   # atomic adds
        self.dead_stores: dict = {}                  # tensor -> a store no warpgroup runs
        self.findings: list[Finding] = []
        # where an error was reported (driver.dedupe keeps one finding per check and
        # place): a later violation there is confirmed with a model but not minimised
        self.error_locs: set = set()
        self.errors_before = False           # the op being walked had one on an earlier visit
        self.unmodelled: dict[str, object] = {}      # opcode -> first loc
        self.loop_vars: dict[tuple, object] = {}     # loop key -> tuple of var names
        self.trip: dict[str, object] = {}            # var name -> trip count term (or None)
        self.schedules: dict[str, ScheduleInfo] = {}  # i var name -> info
        self.asserted: set[int] = set()              # ids of values named by tag.assert
        self.sizes: dict[str, object] = {}
        self.tensors: dict[str, tuple] = {}           # tensor -> extents as terms
        self.grid = ()
        self.pos = {"pr": self.ctx.var("pr", "position"), "pc": self.ctx.var("pc", "position"),
                    "kk": self.ctx.var("kk", "position"), "j": self.ctx.var("j", "position")}
        self.checked_schedules: set = set()
        self.split_loops: dict[int, tuple[Op, Op]] = {}  # id(for op) -> (first, last) part
        self.part_bounds: list = []     # the counter ranges of the split-loop parts entered
        self._setup()

    # -- setup ----------------------------------------------------------------------------
    def _setup(self) -> None:
        k = self.kernel
        for s in k.symbols:
            term = self.ctx.var(s.name, "size", lower=1)
            self.env[s] = term
            self.sizes[s.name] = term
        names = dict(self.sizes)
        names.update({n: v for n, v in k.constants.items() if isinstance(v, int)})
        for p in k.params:
            if isinstance(p.type, GlobalTensorType):
                ext = tuple(d if isinstance(d, int) else self.sizes[d] for d in p.type.shape)
                self.tensors[p.name] = ext
                self.env[p] = ("tensor", p.name)
        quotients.setup(self)      # before the grid: R // S blocks are Q blocks
        self.grid = tuple(scalars.extent(self.ctx, g, names) for g in k.launch.grid)
        self.cluster = cluster.setup(self)
        self.defs = {r: op for op in k.walk() for r in op.results}   # value -> defining op
        for op in k.walk():
            if op.opcode == "tag.assert":
                self.asserted.update(id(v) for v in op.operands if isinstance(v, Value))

    @property
    def num_blocks(self):
        total = 1
        for g in self.grid:
            total = scalars.binary(self.ctx, "mul", total, g)
        return total

    def scope_vars(self) -> tuple[str, ...]:
        return tuple(v for f in self.frames for v in f.vars)

    def site_conditions(self, accumulated) -> tuple[list, tuple]:
        """The conditions under which an accumulating site runs (the ifs around it, a
        split loop part's bounds), split in two: those that may differ from step to step
        (over a loop counter accumulated since the reset, a product over one, a loaded
        value), which go into each step's validity, and those over sizes, block and
        warpgroup indices, the counters of loops around the reset, products of those and
        input tensors' elements only, which stay the same from the reset to a use: the
        contribution's guard (Contribution.valid_under).
        """
        fixed_ids = {v.term.get_id() for n, v in self.ctx.vars.items()
                     if v.kind in FIXED_KINDS and n not in accumulated}
        for atom, a, b in self.ctx.atoms.values():    # made in order: factors first
            if termscan.scan(bv(a)).variables <= fixed_ids and \
                    termscan.scan(bv(b)).variables <= fixed_ids:
                fixed_ids.add(atom.get_id())
        varying, fixed = [], []
        for p in self.path:
            (fixed if termscan.scan(p).variables <= fixed_ids else varying).append(p)
        return varying, tuple(fixed)

    # -- diagnostics ------------------------------------------------------------------------
    def report(self, finding: Finding) -> None:
        if self.phase == "check":
            self.findings.append(finding)
            if finding.severity == "error":
                self.error_locs.add(finding.loc)

    def reported(self, check: str, loc) -> bool:
        """An error of `check` is already reported at `loc` (an earlier visit of the op):
        another would be a duplicate that driver.dedupe drops (one per check and place)."""
        return any(f.check == check and f.loc == loc and f.severity == "error"
                   for f in self.findings)

    def minimising(self) -> bool:
        """Whether a counterexample found now is worth minimising: not when an error was
        reported at the op being walked on an earlier visit (the same op reached again
        through another loop part, call site or warpgroup: what it finds again is a
        duplicate that driver.dedupe drops; it is still confirmed by a model)."""
        return not self.errors_before

    def rule_crashed(self, op: Op, err: BaseException, what: str = "tag rule") -> None:
        """A rule that raised a programming error (a TypeError, a z3 sort mismatch): a
        defect of the verifier, reported at the op as such (never as "not modelled"):
        what flows through the op is not verified."""
        if self.phase != "check":
            return
        self.findings.append(Finding(
            "tag.internal-error", "warning",
            f"the {what} for {op.opcode} failed here ({type(err).__name__}: {err}): a "
            f"defect of the verifier, not of the kernel; tags flowing through this "
            f"{op.opcode} are not verified", op.loc, op.opcode,
            "report this verifier bug with the kernel; the kernel is unverified, not failed"))

    def not_modelled(self, op: Op, why: str = "") -> None:
        if self.phase == "check" and op.opcode not in self.unmodelled:
            self.unmodelled[op.opcode] = (op.loc, why)

    # -- walking ----------------------------------------------------------------------------
    def run(self) -> None:
        for phase in ("collect", "check"):
            self.phase = phase
            self.frames = [Frame()]
            self.env = {k: v for k, v in self.env.items()
                        if k in self.kernel.symbols or k in self.kernel.params}
            self.walk_block(self.kernel.body)

    def walk_block(self, block: Block) -> None:
        self.split_loops.update(split_loops(block))
        for op in block.ops:
            self.walk_op(op)

    def value(self, operand):
        if isinstance(operand, Value):
            return self.env.get(operand)
        return operand

    def walk_op(self, op: Op) -> None:
        outer, self.errors_before = self.errors_before, op.loc in self.error_locs
        try:
            self._walk_op(op)
        finally:
            self.errors_before = outer

    def _walk_op(self, op: Op) -> None:
        from . import offtensor, rules, uninit, within
        uninit.check(self, op)               # a fragment read before it is written
        handler = getattr(self, "op_" + op.opcode.replace(".", "_"), None)
        if handler is not None:
            handler(op)
            return
        rule = rules.RULES.get(op.opcode)
        if rule is not None:
            try:
                rule(self, op)
            except Undecided as why:
                if self.phase == "check":
                    self.findings.append(Finding(
                        "tag.undecided", "warning", f"z3 could not decide a check of this "
                        f"{op.opcode} ({why}); it is not verified", op.loc, op.opcode,
                        "simplify the index arithmetic (no products of two sizes)"))
                self._unknown_results(op, f"z3 could not decide a check of the {op.opcode}")
            except DEFECTS as err:
                self.rule_crashed(op, err)
                self._unknown_results(op, f"the rule for {op.opcode} failed")
            except (ValueError, ArithmeticError, LookupError) as err:
                self.not_modelled(op, f"{type(err).__name__}: {err}")
                self._unknown_results(op, f"{op.opcode} is not modelled")
            else:
                origin.follow(self, op)      # the tensor of origin (origin.py)
                offtensor.check(self, op)    # a read that never meets its tensor
                within.check(self, op)       # entries and segments inside what they index
            return
        if op.opcode.startswith("arith."):
            self.op_arith(op)
            return
        self.not_modelled(op)
        for r in op.results:
            self.env[r] = Fragment(getattr(r.type, "shape", ()), getattr(r.type, "layout", ""),
                                   FragTag("unknown", why_unknown=f"{op.opcode} is not modelled"),
                                   op.loc) if hasattr(r.type, "layout") else None

    def _unknown_results(self, op: Op, why: str) -> None:
        """The results of an op whose rule could not finish: fragments with an unknown tag
        and an unknown tensor of origin (data of unknown provenance, never "no data"),
        anything else None."""
        for r in op.results:
            if hasattr(r.type, "layout"):
                frag = Fragment(getattr(r.type, "shape", ()), r.type.layout,
                                FragTag("unknown", why_unknown=why), op.loc)
                frag.origin = origin.UNKNOWN
                self.env[r] = frag
            else:
                self.env[r] = None

    # -- structure ----------------------------------------------------------------------------
    def op_arith(self, op: Op) -> None:
        name = op.opcode.split(".", 1)[1]
        args = [self.value(o) for o in op.operands]
        if any(a is None or isinstance(a, float) for a in args):
            self.env[op.result] = None
            return
        try:
            out = (scalars.unary(name, args[0]) if len(args) == 1
                   else scalars.binary(self.ctx, name, args[0], args[1]))
        except scalars.ScalarError:
            self.not_modelled(op)
            out = None
        self.env[op.result] = out

    def op_assume(self, op: Op) -> None:
        cond = self.value(op.arg("cond"))
        if cond is not None and self.phase == "collect":
            self.ctx.facts.append(scalars.as_bool(cond))

    def op_block_id(self, op: Op) -> None:
        self.env[op.result] = cluster.block_id(self, op.attrs.get("axis", "x"))

    def op_cluster_rank(self, op: Op) -> None:
        self.env[op.result] = cluster.rank(self)      # see cluster.py

    def op_warpgroup_index(self, op: Op) -> None:
        self.env[op.result] = self.role.index if self.role else 0

    def op_role(self, op: Op) -> None:
        """The role's body once per warpgroup, or once for all of them with the warpgroup
        index a variable in the role's scope (symmetric.py) where that stands for them."""
        from . import symmetric
        saved = self.role
        name, wgs = op.attrs["name"], tuple(op.attrs["warpgroups"])
        walks: list = list(range(len(wgs)))
        if len(wgs) > 1 and symmetric.walkable(op.regions[0]):
            key = ("role", name)
            if key not in self.loop_vars:
                index = symmetric.index_var(self, name, len(wgs))
                self.loop_vars[key] = (self.ctx.name_of_term(index),)
            walks = [self.loop_vars[key][0]]
        for index in walks:
            if isinstance(index, str):               # the variable's name: every warpgroup
                self.role = RoleContext(name, wgs, self.ctx.vars[index].term)
                self.frames.append(Frame(vars=[index]))
            else:
                self.role = RoleContext(name, wgs, index)
                self.frames.append(Frame())          # a role sees only its own waits
            self.walk_block(op.regions[0])
            self.frames.pop()
        self.role = saved

    def op_elect_one(self, op: Op) -> None:
        self.walk_block(op.regions[0])

    def op_if(self, op: Op) -> None:
        cond = self.value(op.arg("cond"))
        if cond is None:
            self.not_modelled(op, "a condition the pass cannot express")
            return
        cond = scalars.as_bool(cond)
        for region, c in zip(op.regions, (cond, z3.Not(cond))):
            self.path.append(c)
            self.walk_block(region)
            self.path.pop()

    def split_first(self, op: Op) -> Op | None:
        """The first part of the split loop that `op` continues (None: op is not a later
        part of a split loop)."""
        first = self.split_loops.get(id(op), (op,))[0]
        return None if first is op else first

    def _key(self, x):
        if isinstance(x, int):
            return x
        if x is None:
            return None
        return z3.simplify(bv(x)).sexpr()

    def op_for(self, op: Op) -> None:
        start, stop, step = (self.value(op.arg(n)) for n in ("start", "stop", "step"))
        part = None                      # this part's own range, when the loop is split
        if id(op) in self.split_loops:
            first, last = self.split_loops[id(op)]
            part = (start, stop)
            start, stop = self.value(first.arg("start")), self.value(last.arg("stop"))
        depth = len(self.frames)
        key = ("for", depth, self._key(start), self._key(stop), self._key(step))
        (arg,) = op.regions[0].args
        if None in (start, stop, step):
            self.not_modelled(op, "loop bounds the pass cannot express")
            if key not in self.loop_vars:
                name = self.ctx.name_of_term(self.ctx.var(display_name(arg), "iteration"))
                self.loop_vars[key] = (name,)
                self.trip[name] = None
        if key not in self.loop_vars:
            var = self.ctx.var(display_name(arg), "iteration", upper=stop)
            name = self.ctx.name_of_term(var)
            if not (isinstance(start, int) and start == 0):
                self.ctx.fact(z3.UGE(var, bv(start)), name)
            if not (isinstance(step, int) and step == 1):
                self.ctx.fact(bv(scalars.binary(self.ctx, "mod", scalars.binary(
                    self.ctx, "sub", var, start), step)) == 0, name)
            self.loop_vars[key] = (name,)
            if start == 0 and step == 1 and isinstance(stop, int) and stop <= SMALL_TRIP:
                self.ctx.small[var.sexpr()] = stop      # e * N becomes exact (smt.Context.mul)
            trip = scalars.binary(self.ctx, "sub", stop, start)
            if not (isinstance(step, int) and step == 1):
                trip = scalars.binary(self.ctx, "floordiv", scalars.binary(
                    self.ctx, "add", trip, scalars.binary(self.ctx, "sub", step, 1)), step)
            self.trip[name] = trip
        (name,) = self.loop_vars[key]
        from . import carried, countsort_loops, ranked_loops   # loop-carried meanings
        carried.enter(self, op, name)
        ranked_loops.enter(self, op, name)
        countsort_loops.enter(self, op, name)
        bounds = [] if part is None or None in part else \
            [z3.UGE(bv(self.ctx.vars[name].term), bv(part[0])),
             *below(self.ctx.vars[name].term, part[1])]
        self.path.extend(bounds)          # a part of a split loop: its counter in its range
        self.part_bounds.extend(bounds)
        self._enter(op.regions[0], [(arg, self.ctx.vars[name].term)], [name])
        del self.path[len(self.path) - len(bounds):]
        del self.part_bounds[len(self.part_bounds) - len(bounds):]
        countsort_loops.leave(self, op, name)
        ranked_loops.leave(self, op, name)
        carried.leave(self, op, name)

    def _enter(self, block: Block, bindings, names) -> None:
        for arg, term in bindings:
            self.env[arg] = term
        self.frames.append(Frame(vars=list(names)))
        self.walk_block(block)
        self.frames.pop()

    def op_schedule(self, op: Op) -> None:
        extents = tuple(self.value(o) for o in op.args("extents"))
        if None in extents:
            self.not_modelled(op, "tile-grid extents the pass cannot express")
            return
        order, group = op.attrs.get("order", "row_major"), op.attrs.get("group", 1)
        depth = len(self.frames)
        walker, walkers = cluster.walker(self, op.attrs.get("by", "block"))
        key = ("schedule", depth, tuple(self._key(e) for e in extents), order, group, walker)
        args = op.regions[0].args
        if key not in self.loop_vars:
            i = self.ctx.name_of_term(self.ctx.var(display_name(args[0]), "iteration"))
            coords = tuple(self.ctx.name_of_term(self.ctx.var(display_name(a), "tile", upper=e))
                           for a, e in zip(args[1:], extents))
            cluster.walker_var(self, walker)
            total = 1
            for e in extents:
                total = scalars.binary(self.ctx, "mul", total, e)
            step = scalars.binary(self.ctx, "mul", self.ctx.vars[i].term, walkers)
            t = scalars.binary(self.ctx, "add", step, self.ctx.vars[walker].term)
            self.ctx.fact(z3.ULT(bv(t), bv(total)), i)
            self.loop_vars[key] = (i, *coords)
            self.trip[i] = None
            for c in coords:
                self.trip[c] = None
            self.schedules[i] = ScheduleInfo(order, group, extents, i, coords, walkers, walker)
        names = self.loop_vars[key]
        if self.phase == "check" and key not in self.checked_schedules:
            self.checked_schedules.add(key)
            ok, how = prove_bijection(order, group, len(extents))
            if not ok:
                self.report(Finding(
                    "tag.schedule", "error",
                    f"the {order} tile order (group {group}) is not a bijection onto the "
                    f"tile grid: {how}", op.loc, "schedule",
                    "use order='row_major' or fix the group size"))
        self._enter(op.regions[0], [(a, self.ctx.vars[n].term) for a, n in zip(args, names)],
                    names)

    def op_walked(self, op: Op) -> None:
        """The running sum of a weight over the schedule's earlier tiles: one variable per
        (schedule, weight), the same in every role that walks that schedule with that weight
        (the producer's and the consumers' ring positions, walked(nj) + j, are then one
        term). Its value is free: what the ring's phases need of it is the protocol pass's
        (protocol/model.py numbers such a loop's steps by the same sum)."""
        weight, step = self.value(op.arg("weight")), self.value(op.arg("iteration"))
        if weight is None or not z3.is_expr(step):
            self.not_modelled(op, "a walked weight the pass cannot express")
            self.env[op.result] = None
            return
        sums = self.__dict__.setdefault("walked_sums", {})
        key = (self.ctx.name_of_term(step), self._key(weight))
        if key not in sums:
            sums[key] = self.ctx.var(f"{display_name(op.result)}", "data")
        self.env[op.result] = sums[key]

    # -- mbarriers (only the waits matter to tags; the protocol pass checks the rest) ----------
    def op_mbarrier_alloc(self, op: Op) -> None:
        self.env[op.result] = ("barriers", op.result.name, op.attrs.get("count"))

    def op_mbarrier_at(self, op: Op) -> None:
        arr = self.value(op.arg("array"))
        self.env[op.result] = Barrier(arr[1] if arr else "?", self.value(op.arg("index")))

    def op_mbarrier_wait(self, op: Op) -> None:
        bar = self.value(op.arg("bar"))
        if isinstance(bar, Barrier):
            self.frames[-1].waits.append((bar, op.loc))

    def _noop(self, op: Op) -> None:
        pass

    op_mbarrier_init = op_mbarrier_arrive = op_mbarrier_expect_tx = _noop
    op_fence_proxy_async = op_fence_mbarrier_init = op_barrier_block = _noop
    op_barrier_named = op_barrier_cluster = _noop
    op_wgmma_fence = op_wgmma_commit = op_wgmma_wait = _noop
    op_tma_store_commit = op_tma_store_wait = _noop

    def waits_on(self, array: str):
        """The most recent wait on `array` visible here (innermost frame first)."""
        for frame in reversed(self.frames):
            for bar, loc in reversed(frame.waits):
                if bar.array == array:
                    return bar, loc
        return None
