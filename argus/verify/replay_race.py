"""Replay of a race's element: does each writer a `tag.store-race` counterexample names
really write the element it names?

replay.py replays the *point* of a counterexample (its sizes, block and loop counters are
values some run gives them together). A race claims more: two writers store one element.
Here the claim itself is replayed concretely, apart from the z3 terms the claim was found
with: for each writer (the counterexample's own point, and the `second writer` of its
element) the kernel is walked at the model's sizes, in the writer's block and warpgroup
(the role that holds it, `warpgroup_index()` its place there), its named loop counters
taking their named values and every other loop every trip, both branches of every `if`.
Segment and tile origins are computed as the interpreter computes them
(argus/interp/ops/memory.py, scan.py); at every store into the race's tensor the element
is written when it lies in the tile's box, in the tensor and in the segment's window,
and, when the counterexample names the register's cell in its atom (`cell`), when it is
exactly the tile's origin plus that cell.

The walk over-approximates what a writer stores (every branch, every trip), so a writer
no store of which writes the element never writes it: the race is impossible, and the
counterexample a defect of the verifier. Anything the walk cannot compute (a tile origin
from data, a store whose destination is unknown, a loop past its budget) leaves the claim
unsettled (None): it is reported as the pass found it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from argus.interp.exprs import eval_extent
from argus.ir.nodes import Block, Kernel, Op, Value
from argus.ir.ops.arith import SEMANTICS

MAX_TRIPS = 512            # iterations of an unnamed loop walked before giving up
MAX_STEPS = 200_000        # ops visited for one writer before giving up
MAX_BLOCKS = 4096          # blocks tried when a writer names none
UNKNOWN = object()
STORES = ("store", "tma.store", "atomic.add")
WRITER_KEYS = ("thread", "register", "warpgroup", "block")


class _Unsettled(Exception):
    """The walk cannot say what this writer stores."""


@dataclass(frozen=True)
class Writer:
    """One writer of a race: where it runs (None: not named) and, when named, the cell of
    its register in the fragment's atom."""
    block: Optional[tuple]
    warpgroup: Optional[int]
    counters: dict
    cell: Optional[tuple] = None


@dataclass(frozen=True)
class _Segment:
    tensor: str
    start: int
    rows: int


@dataclass(frozen=True)
class _Tile:
    tensor: str
    origin: tuple
    box: tuple
    window: Optional[tuple]       # (start, rows) of a segment's tile


def writers(cex) -> Optional[tuple[Writer, Writer, str, tuple]]:
    """(first writer, second writer, tensor, element) of a race counterexample, or None
    when it names no second writer."""
    if len(cex.elements) != 1:
        return None
    e = cex.elements[0]
    other = e.actual.get("second writer")
    if not isinstance(other, dict):
        return None
    first = Writer(cex.block, cex.warpgroup, dict(cex.iteration), cex.cell)
    block = None
    if "block" in other:
        block = (int(other["block"]),)
    elif any(k.startswith("block_") for k in other):
        block = tuple(int(other.get(f"block_{a}", 0)) for a in "xyz")
    counters = {k: int(v) for k, v in other.items()
                if isinstance(v, int) and k not in WRITER_KEYS and not k.startswith("block")}
    second = Writer(block, other.get("warpgroup"), counters)
    return first, second, e.tensor, tuple(int(i) for i in e.index)


def writes(kernel: Kernel, symbols: dict, grid: tuple, writer: Writer, tensor: str,
           element: tuple) -> Optional[bool]:
    """Does the writer store `element` of `tensor` in some run? None when the walk cannot
    settle it."""
    extents = _extents(kernel, symbols)
    if extents is None or tensor not in extents:
        return None
    total = 1
    for g in grid:
        total *= g
    if writer.block is not None:
        block = tuple(writer.block) + (0,) * (len(grid) - len(writer.block))
        if not all(0 <= b < g for b, g in zip(block, grid)):
            return False
        blocks = [block]
    elif total > MAX_BLOCKS:
        return None
    else:
        blocks = [_coords(b, grid) for b in range(total)]
    walk = _Walk(kernel, symbols, extents, writer, tensor, element)
    try:
        for block in blocks:
            walk.block = block
            walk.env = {v: symbols[v.name] for v in kernel.symbols}
            walk.env.update({p: ("tensor", p.name) for p in kernel.params})
            walk.region(kernel.body, None)
            if walk.hit:
                return True
    except _Unsettled:
        return None
    return False


def _coords(linear: int, grid: tuple) -> tuple:
    out = []
    for g in grid:
        out.append(linear % g)
        linear //= g
    return tuple(out)


def _extents(kernel: Kernel, symbols: dict) -> Optional[dict]:
    out = {}
    for p in kernel.params:
        shape = getattr(p.type, "shape", None)
        if shape is None:
            continue
        try:
            out[p.name] = tuple(int(eval_extent(d, symbols, kernel.constants)) for d in shape)
        except Exception:  # noqa: BLE001 - a shape this walk cannot evaluate
            return None
    return out


class _Walk:
    def __init__(self, kernel, symbols, extents, writer, tensor, element):
        self.kernel, self.extents, self.writer = kernel, extents, writer
        self.tensor, self.element = tensor, element
        self.block: tuple = ()
        self.env: dict = {}
        self.steps = 0
        self.hit = False

    def value(self, operand):
        if isinstance(operand, Value):
            return self.env.get(operand, UNKNOWN)
        if isinstance(operand, (bool, int)):
            return operand
        return UNKNOWN

    def region(self, block: Block, role_index) -> None:
        for op in block.ops:
            if self.hit:
                return
            self.op(op, role_index)

    def op(self, op: Op, role_index) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Unsettled()
        code = op.opcode
        for r in op.results:
            self.env[r] = UNKNOWN
        if code.startswith("arith.") and op.results:
            args = [self.value(o) for o in op.operands]
            fn = SEMANTICS.get(code.split(".", 1)[1])
            if fn is not None and not any(a is UNKNOWN or isinstance(a, float) for a in args):
                try:
                    self.env[op.results[0]] = fn(*args)
                except (ArithmeticError, TypeError, ValueError):
                    pass
        elif code == "block_id":
            axis = "xyz".index(op.attrs["axis"])
            if axis < len(self.block):
                self.env[op.results[0]] = self.block[axis]
        elif code == "warpgroup_index":
            if role_index is not None:
                self.env[op.results[0]] = role_index
        elif code == "segment":
            self._segment(op)
        elif code == "tile":
            self._tile(op)
        elif code in STORES:
            self._store(op)
        elif code == "for":
            self._for(op, role_index)
            return
        elif code == "role":
            groups = tuple(op.attrs.get("warpgroups", ()))
            wg = self.writer.warpgroup
            if wg is not None and groups and wg not in groups:
                return                           # not this writer's role
            inner = groups.index(wg) if wg is not None and wg in groups else None
            for region in op.regions:
                self.region(region, inner)
            return
        elif code == "schedule":
            raise _Unsettled()                   # persistent tiles: not replayed here
        for region in op.regions:                # if, elect_one: every branch
            for a in region.args:
                self.env[a] = UNKNOWN
            self.region(region, role_index)
            if self.hit:
                return

    def _for(self, op: Op, role_index) -> None:
        start, stop, step = (self.value(op.arg(n)) for n in ("start", "stop", "step"))
        body = op.regions[0]
        counter = body.args[0] if body.args else None
        named = self.writer.counters.get(counter.source_name) if counter is not None else None
        if UNKNOWN in (start, stop, step):
            if not self._stores_inside(body):
                return
            if named is None:
                raise _Unsettled()               # a loop of unknown trips around a store
            trips = [named]
        elif named is not None:
            trips = [named] if named in range(start, stop, step) else []
        elif not self._stores_inside(body):
            return                               # nothing stored in it: nothing to find
        else:
            trips = range(start, stop, step)
            if len(trips) > MAX_TRIPS:
                raise _Unsettled()
        for i in trips:
            if counter is not None:
                self.env[counter] = i
            self.region(body, role_index)
            if self.hit:
                return

    def _stores_inside(self, block: Block) -> bool:
        return any(op.opcode in STORES or any(self._stores_inside(r) for r in op.regions)
                   for op in block.ops)

    def _segment(self, op: Op) -> None:
        base, start, rows = (self.value(op.arg(n)) for n in ("tensor", "start", "rows"))
        if isinstance(base, tuple) and base[0] == "tensor" and \
                isinstance(start, int) and isinstance(rows, int):
            self.env[op.results[0]] = _Segment(base[1], start, rows)

    def _tile(self, op: Op) -> None:
        base = self.value(op.arg("tensor"))
        coords = [self.value(c) for c in op.args("coords")]
        box = tuple(op.attrs["box"])
        if any(not isinstance(c, int) for c in coords):
            return
        origin = [c * b for c, b in zip(coords, box)]
        if isinstance(base, _Segment):
            origin[0] += base.start
            self.env[op.results[0]] = _Tile(base.tensor, tuple(origin), box,
                                             (base.start, base.rows))
        elif isinstance(base, tuple) and base[0] == "tensor":
            self.env[op.results[0]] = _Tile(base[1], tuple(origin), box, None)

    def _store(self, op: Op) -> None:
        dst = self.value(op.arg("dst"))
        if dst is UNKNOWN:
            if self._may_be_global(op):
                raise _Unsettled()               # a store the walk cannot place
            return
        if not isinstance(dst, _Tile) or dst.tensor != self.tensor:
            return
        if self._writes(dst):
            self.hit = True

    def _may_be_global(self, op: Op) -> bool:
        kind = type(getattr(op.arg("dst"), "type", None)).__name__
        return kind in ("GlobalTileType", "NoneType")

    def _writes(self, tile: _Tile) -> bool:
        shape = self.extents[self.tensor]
        rank = len(shape)
        at = self.element[:rank]
        if any(x != 0 for x in self.element[rank:]):
            return False
        if not all(0 <= x < e for x, e in zip(at, shape)):
            return False
        if tile.window is not None and not tile.window[0] <= at[0] < sum(tile.window):
            return False
        offset = [x - o for x, o in zip(at, tile.origin)]
        if not all(0 <= d < b for d, b in zip(offset, tile.box)):
            return False
        cell = self.writer.cell
        if cell is not None and len(tile.box) == 2:
            return tuple(offset) == tuple(cell)
        return True
