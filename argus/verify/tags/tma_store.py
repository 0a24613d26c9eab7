"""TMA stores from a shared-memory tile to a global tile, and what they carry.

At the op (`tma_store`) the global write is recorded like a register store (writers.py
checks races and coverage over all writers of a tensor); the issuing threads are part of
its identity (one inside elect_one, else every thread of the warpgroup, each issuing the
whole copy). After the walk (every warpgroup's stores into shared memory are then known)
`check` resolves each element the TMA store reads to the store of the same tile that
wrote it, and checks the element at its destination as a register store is checked:

- the TMA box image reads, at box element (pr, pc), stage element offset + (pr, pc): one
  box per column chunk of the view (chunk_cols x rows, as the backend issues them), the
  hardware image of each box (argus.layout.hopper.TmaBox) inverted through the stage
  layout (tma.StageLayout); proved once per view shape;
- the stores *of this tile* are those in the same loop body (the same loop counters, so
  the same tile) before the TMA store in program order, by any warpgroup of its role, or
  in another role (whose synchronisation with this one the protocol pass checks); a store
  after it in the loop body wrote the previous tile's data;
- tag.smem-unwritten: an element inside the tensor that no store of this tile wrote (it
  holds what an earlier tile, or nothing, left there);
- tag.smem-race: an element that two stores wrote in one tile, unordered (the copy reads
  either): stores of two warpgroups or roles, or two of one warpgroup where different
  threads write the element with no barrier of the warpgroup between them; otherwise the
  later store wins;
- tag.store-coordinate: the element's row/col tags equal its destination coordinate;
- tag.k-coverage: every k in [0, K) is accumulated exactly once into it (kcoverage.py).
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

import z3

from argus.ir.nodes import Op
from argus.layout.hopper.tma import TmaBox, TmaError
from argus.layout.swizzle import ComposedLayout
from argus.verify.finding import Counterexample, ElementTag, Finding
from argus.verify.smt import TIMEOUT_MS, bv, concrete, holds, narrow, solve, value

from . import report, store as stores
from .kcoverage import k_coverage
from .program import barrier_between, issuers, place
from .smem_store import writes_its_elements
from .tma import StageLayout, stage_layout
from .values import GlobalTile, SmemView, SmemWrite, TmaStoreRead


def tma_store(w, op: Op) -> None:
    if w.phase != "check":
        return
    dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
    if not (isinstance(dst, GlobalTile) and isinstance(src, SmemView)):
        w.not_modelled(op, "a TMA store whose tiles are not known")
        return
    if len(dst.box) != 2 or tuple(dst.box) != tuple(src.shape):
        w.not_modelled(op, f"a TMA store of a {tuple(src.shape)} tile into a box {dst.box}")
        return
    if z3.is_false(z3.simplify(z3.And(*w.path))):
        w.dead_stores.setdefault(dst.tensor, op)    # writers.coverage: if none runs at all
        return                         # a branch this warpgroup never takes
    extra = ()
    n = issuers(w, op)
    if n > 1:
        extra = (w.ctx.name_of_term(w.ctx.var("issuer", "thread", upper=n)),)
    rec = stores.record(w, op, dst, "tma.box", dst.box, extra)
    w.stores.append(rec)
    w.tma_reads.append(TmaStoreRead(src, dst, w.scope_vars(), tuple(w.path),
                                    w.role.name if w.role else None, rec.warpgroup,
                                    place(w, op).order, op.loc, op))


# -- the TMA box image ------------------------------------------------------------------------
def tma_byte(stage: StageLayout, offset, shape, pr, pc):
    """The stage-relative byte a TMA store reads for box element (pr, pc) of a view at
    `offset` (whole chunks of columns): box j covers view columns [j*w, (j+1)*w), at stage
    byte (o1 / w + j) * chunk_stride + o0 * span, laid out by the hardware's box image.
    Raises ValueError when the view is not whole chunks, TmaError for an illegal box."""
    w, eb = stage.chunk_cols, stage.element_bytes
    o1 = concrete(offset[1])
    if o1 is None or o1 % w or shape[1] % w:
        raise ValueError(f"a view at column {offset[1]} of {shape[1]} columns is not whole "
                         f"{w}-column chunks")
    rows = shape[0]
    box = TmaBox(eb, (w, rows), (eb, -(-w * eb // 16) * 16), (w, rows), stage.swizzle)
    image = box.smem_image()
    byte = None
    for j in reversed(range(shape[1] // w)):
        base = bv((o1 // w + j) * stage.chunk_stride) + bv(offset[0]) * stage.span
        base = concrete(base) if concrete(base) is not None else base
        at = ComposedLayout(image.swizzle, base, image.layout)
        here = bv(at((narrow(bv(pc) - j * w, 16), narrow(pr, 16))))
        byte = here if byte is None else z3.If(z3.ULT(bv(pc), (j + 1) * w), here, byte)
    return byte


def reads_its_elements(stage: StageLayout, offset, shape) -> str:
    """'' when box element (pr, pc) of the view reads stage element offset + (pr, pc) for
    every (pr, pc); else why not."""
    o = tuple(concrete(x) for x in offset)
    if None in o:
        return _reads(stage, offset, tuple(shape))
    return _cached_reads(stage, o, tuple(shape))


@lru_cache(maxsize=None)
def _cached_reads(stage, offset, shape) -> str:
    return _reads(stage, offset, shape)


def _reads(stage, offset, shape) -> str:
    pr, pc = z3.BitVecs("pr_t pc_t", 64)
    try:
        byte = tma_byte(stage, offset, shape, pr, pc)
    except (ValueError, TmaError) as err:
        return str(err)
    r, c, ok = stage.element_at(byte)
    result, s = solve([z3.ULT(pr, shape[0]), z3.ULT(pc, shape[1]),
                       z3.ULT(bv(offset[0]) + pr, stage.rows),
                       z3.Not(z3.And(ok, r == bv(offset[0]) + pr, c == bv(offset[1]) + pc))])
    if result == z3.unsat:
        return ""
    if result == z3.sat:
        m = s.model()
        return (f"box element ({value(m, pr)}, {value(m, pc)}) is read at a byte that holds "
                f"another element of the stage")
    return "z3 could not decide the TMA box image"


# -- after the walk ------------------------------------------------------------------------
def check(w) -> None:
    for read in w.tma_reads:
        try:
            _check(w, read)
        except report.Undecided as why:
            w.findings.append(Finding(
                "tag.undecided", "warning", f"z3 could not decide what this TMA store reads "
                f"({why}); not verified", read.loc, "tma_store",
                "simplify the tile coordinates"))


def _not_modelled(w, read: TmaStoreRead, why: str) -> None:
    w.unmodelled.setdefault("tma.store", (read.loc, why))


class _Writer:
    """A store of this tile as seen from one read element: where it lands, and when it
    wrote the element the TMA store reads (after shadowing by later stores)."""

    def __init__(self, x: SmemWrite, elem, read: TmaStoreRead):
        self.x = x
        self.pos = (elem[0] - bv(x.view.offset[0]), elem[1] - bv(x.view.offset[1]))
        self.wrote = z3.And(*x.path, bv(x.view.stage) == bv(read.view.stage),
                            z3.ULT(self.pos[0], x.shape[0]), z3.ULT(self.pos[1], x.shape[1]))
        self.last = self.wrote

    def at(self, pr, pc):
        pos = self.pos
        return lambda t: z3.substitute(bv(t), (pr, pos[0]), (pc, pos[1]))


def _check(w, read: TmaStoreRead) -> None:
    stage = stage_layout(read.view.buffer)
    buf = read.view.buffer.name
    if stage is None:
        _not_modelled(w, read, f"{buf} is not a 2-D tile of whole swizzle chunks")
        return
    why = reads_its_elements(stage, read.view.offset, read.view.shape)
    if why:
        _not_modelled(w, read, f"the TMA box image of {buf}: {why}")
        return
    mine = [x for x in w.smem_writes if x.view.buffer.name == buf]
    other = next((x for x in mine if x.scope != read.scope), None)
    if other is not None:
        _not_modelled(w, read, f"the store into {buf} at line {other.loc.line} is in other "
                               f"loops than this TMA store")
        return
    for x in mine:
        if not writes_its_elements(stage, x.view.offset, x.shape):
            _not_modelled(w, read, f"the store into {buf} at line {x.loc.line}: its bytes do "
                                   "not invert to its elements")
            return
    pr, pc = w.pos["pr"], w.pos["pc"]
    hyp = [*read.path, z3.ULT(pr, read.view.shape[0]), z3.ULT(pc, read.view.shape[1])]
    dst = (bv(read.dst.origin[0]) + pr, bv(read.dst.origin[1]) + pc)
    into = z3.And(z3.ULT(dst[0], bv(read.dst.extents[0])),
                  z3.ULT(dst[1], bv(read.dst.extents[1])))
    elem = (bv(read.view.offset[0]) + pr, bv(read.view.offset[1]) + pc)
    ordered = [x for x in mine if x.role != read.role or (
        x.order < read.order and _synchronised(w, x, read))]
    unsynced = [x for x in mine if x.role == read.role and x.order < read.order
                and x not in ordered]
    before = [_Writer(x, elem, read) for x in ordered]
    ctx = _Context(w, read, stage, hyp, dst, into, elem)
    if not _races(ctx, before):
        return
    if not _unwritten(ctx, before, [x for x in mine if x.role == read.role
                                    and x.order > read.order], unsynced):
        return
    for x in before:
        if x.x.tag.state == "data":
            _coordinates(ctx, x) and _k(ctx, x)


@dataclasses.dataclass
class _Context:
    w: object
    read: TmaStoreRead
    stage: StageLayout
    hyp: list
    dst: tuple
    into: object
    elem: tuple

    def byte(self):
        pr, pc = self.w.pos["pr"], self.w.pos["pc"]
        return tma_byte(self.stage, self.read.view.offset, self.read.view.shape, pr, pc)

    def cex(self, model, writer: "_Writer | None", elements=()):
        w = self.w
        cex = report.counterexample(
            w, model, self.read.scope, elements=elements,
            warpgroup=writer.x.warpgroup if writer else self.read.warpgroup,
            smem_byte=value(model, self.byte()))
        return _with_thread(w, model, writer, cex) if writer else cex

    def where(self, model) -> str:
        return (f"{self.read.dst.tensor}[{value(model, self.dst[0])}, "
                f"{value(model, self.dst[1])}]")

    def stage_element(self, model) -> str:
        return (f"{self.read.view.buffer.name}[{value(model, self.elem[0])}, "
                f"{value(model, self.elem[1])}]")


def _with_thread(w, model, writer: _Writer, cex):
    """The counterexample with the writer's thread and register of the element."""
    x = writer.x
    sub = report.thread_vars(w, x.layout)
    if sub is None:
        return cex
    pairs, t, v, bounds = sub
    pos = [value(model, p) for p in writer.pos]
    s = z3.Solver()
    s.set("timeout", TIMEOUT_MS)
    s.add(*bounds, z3.substitute(bv(w.pos["pr"]), *pairs) == pos[0],
          z3.substitute(bv(w.pos["pc"]), *pairs) == pos[1])
    if s.check() != z3.sat:
        return cex
    tt, vv = value(s.model(), t), value(s.model(), v)
    thread = (x.warpgroup or 0) * 128 + tt
    return dataclasses.replace(cex, thread=thread, register=vv, warp=thread // 32,
                               lane=thread % 32, layout=x.layout, cell=tuple(pos))


def _races(ctx: _Context, before: list[_Writer]) -> bool:
    """Two unordered stores writing one element read are a race; of two ordered ones the
    later wins (shadowing the earlier). False when a race was reported."""
    w = ctx.w
    for i, a in enumerate(before):
        for b in before[i + 1:]:
            if _ordered(w, a.x, b.x):
                first, second = (a, b) if a.x.order < b.x.order else (b, a)
                first.last = z3.And(first.last, z3.Not(second.wrote))
                continue
            both = z3.And(ctx.into, a.wrote, b.wrote)
            if holds(w.ctx, z3.Not(both), ctx.hyp):
                continue
            model = report.find(w, both, ctx.read.scope, ctx.hyp)
            if model is None:
                continue
            first = ctx.cex(model, a)
            second = _with_thread(w, model, b, Counterexample())
            cex = dataclasses.replace(first, elements=(ElementTag(
                f"{ctx.read.view.buffer.name}[stage]",
                (value(model, ctx.elem[0]), value(model, ctx.elem[1])),
                {"second writer": {"warpgroup": b.x.warpgroup, "thread": second.thread,
                                   "register": second.register, "line": b.x.loc.line}},
                {"writers": 1}),))
            w.findings.append(Finding(
                "tag.smem-race", "error",
                f"{ctx.stage_element(model)} is written in one tile by warpgroup "
                f"{a.x.warpgroup} (line {a.x.loc.line}) and by warpgroup {b.x.warpgroup} "
                f"(line {b.x.loc.line}); the TMA store at line {ctx.read.loc.line} copies "
                f"either to {ctx.where(model)}", b.x.loc, "store",
                "give each warpgroup its own rows of the shared tile: tile(c_s[s], (64, BN), "
                "(wg, 0)) with wg = warpgroup_index()", cex))
            return False
    return True


def _synchronised(w, x: SmemWrite, read: TmaStoreRead) -> bool:
    """The threads that stored x (a whole warpgroup: a fragment is spread over its threads)
    and the thread that issues the TMA store pass one barrier between the two ops."""
    threads = 128 * len({x.warpgroup, read.warpgroup})
    return barrier_between(w, x.op, read.op, threads) is not None


def _ordered(w, x: SmemWrite, y: SmemWrite) -> bool:
    """Two stores of one warpgroup whose element is written by the same thread in both (one
    layout, one offset), or with a barrier of the warpgroup between them: the later wins."""
    if x.role != y.role or x.warpgroup != y.warpgroup:
        return False
    same_thread = x.layout == y.layout and all(
        concrete(a) is not None and concrete(a) == concrete(b)
        for a, b in zip(x.view.offset, y.view.offset))
    first, second = (x, y) if x.order <= y.order else (y, x)
    return same_thread or barrier_between(w, first.op, second.op, 128) is not None


def _unwritten(ctx: _Context, before: list[_Writer], after: list[SmemWrite],
               unsynced: list[SmemWrite]) -> bool:
    w = ctx.w
    goal = z3.And(ctx.into, z3.Not(z3.Or(*[x.last for x in before])))
    if holds(w.ctx, z3.Not(goal), ctx.hyp):
        return True
    model = report.find(w, goal, ctx.read.scope, ctx.hyp)
    if model is None:
        return True
    buf = ctx.read.view.buffer.name
    racing = [x for x in unsynced if _lands_at(ctx, model, x)]
    late = [x for x in after if _lands_at(ctx, model, x)]
    if racing:
        x = racing[0]
        need = 128 * len({x.warpgroup, ctx.read.warpgroup})
        why = (f"the store at line {x.loc.line} (warpgroup {x.warpgroup}) that writes it is "
               f"not ordered before the copy: no barrier of its threads and the issuing "
               f"thread ({need} threads) lies between them, so the copy may read it first")
        hint = (f"put named_barrier(id, {need}) (or sync_block()) between the stores into "
                f"{buf} (and their fence_proxy_async()) and the TMA store")
    elif late:
        why = (f"the store at line {late[0].loc.line} writes it after this TMA store, so it "
               f"still holds the previous tile's value")
        hint = "store the tile into shared memory (and fence) before the TMA store reads it"
    elif before:
        why = "no store of this tile writes that element of this stage"
        hint = (f"write every element the TMA store copies: the stores into {buf} must cover "
                f"the copied view, at the stage the TMA store reads")
    else:
        why = f"no store into {buf} comes before it"
        hint = f"store the tile into {buf} before the TMA store"
    cex = ctx.cex(model, None, elements=(
        ElementTag(ctx.read.dst.tensor, (value(model, ctx.dst[0]), value(model, ctx.dst[1])),
                   {"written in this tile": 0}, {"written in this tile": 1}),))
    w.findings.append(Finding(
        "tag.smem-unwritten", "error",
        f"the TMA store copies {ctx.stage_element(model)} (stage "
        f"{value(model, ctx.read.view.stage)}) to {ctx.where(model)}, but {why}",
        ctx.read.loc, "tma_store", hint, cex))
    return False


def _lands_at(ctx: _Context, model, x: SmemWrite) -> bool:
    """Does store x (after the TMA store) write the element read, at these values?"""
    wr = _Writer(x, ctx.elem, ctx.read)
    names = [n for n in ctx.w.ctx.vars if ctx.w.ctx.vars[n].kind in
             ("block", "tile", "iteration", "size", "position", "warpgroup")]
    pins = [ctx.w.ctx.vars[n].term == value(model, ctx.w.ctx.vars[n].term) for n in names]
    s = z3.Solver()
    s.set("timeout", TIMEOUT_MS)
    s.add(*pins, wr.wrote)
    return s.check() == z3.sat


def _coordinates(ctx: _Context, x: _Writer) -> bool:
    w, tag = ctx.w, x.x.tag
    pr, pc = w.pos["pr"], w.pos["pc"]
    inst = x.at(pr, pc)
    for axis, field in enumerate(("row", "col")):
        if field not in tag.fields:
            continue
        claim = z3.Implies(z3.And(ctx.into, x.last), inst(tag.fields[field]) == ctx.dst[axis])
        if holds(w.ctx, claim, ctx.hyp):
            continue
        model = report.find(w, z3.Not(claim), ctx.read.scope, ctx.hyp)
        if model is None:
            continue
        actual = {f: value(model, inst(tag.fields[f])) for f in ("row", "col")
                  if f in tag.fields}
        expected = {"row": value(model, ctx.dst[0]), "col": value(model, ctx.dst[1])}
        cex = ctx.cex(model, x, elements=(ElementTag(
            ctx.read.dst.tensor, (expected["row"], expected["col"]), actual, expected),))
        w.findings.append(Finding(
            "tag.store-coordinate", "error",
            f"the TMA store writes to {ctx.where(model)} the value that carries {field} "
            f"{actual[field]} (stored into {ctx.stage_element(model)} at line "
            f"{x.x.loc.line})", ctx.read.loc, "tma_store",
            "copy the shared tile to the global tile of its rows and columns (tile(C, "
            "(BM, BN), (tm, tn))), and store each warpgroup's rows at their place in the "
            "shared tile", cex))
        return False
    return True


class _NoThread:
    layout = None


def _k(ctx: _Context, x: _Writer) -> bool:
    w = ctx.w
    pr, pc = w.pos["pr"], w.pos["pc"]
    before = len(w.findings)
    k_coverage(w, None, x.x.tag, x.at(pr, pc), [*ctx.hyp, ctx.into, x.last], ctx.read.scope,
               _NoThread(), x.x.warpgroup, 0, (ctx.read.dst.tensor, ctx.dst),
               index_instantiated=True, refine=lambda model, cex: _with_thread(w, model, x, dataclasses.replace(
                   cex, smem_byte=value(model, ctx.byte()))))
    return len(w.findings) == before
