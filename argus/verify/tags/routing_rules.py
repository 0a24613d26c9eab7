"""The MoE routing idiom pack (packs.py; rules.py states where it comes in the order):
index vectors and device-side routing (routing.py), segments (segments.py), gathers
(gather.py) and tag assumptions (assumptions.py). Ops shared with other families
(`scan.prefix_sum`, `indices.element`) dispatch on what they are applied to; the rules it
refines (elementwise math, coordinates, row reductions, stores, loads) handle plain
routing vectors and pass every other value to the rule of the packs before it."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.ir.types import IndexVectorType
from argus.verify.smt import bv

from . import assumptions, gather, joins, memory, routing, segments, vectors
from .meet import LIVE
from .packs import IdiomPack
from .values import Fragment, GlobalTile


def load(w, op: Op, base) -> None:
    """The load of the packs before (`base`: memory.load), plus the routing fields the tag
    assumptions give the tensor's elements, and `live` for a tile of a segment."""
    base(w, op)
    frag, src = w.env.get(op.result), w.value(op.arg("src"))
    if not (isinstance(frag, Fragment) and frag.tag.state == "data"
            and isinstance(src, GlobalTile)):
        return
    names = assumptions.fields(w, src.tensor)
    if not names and src.window is None:
        return
    coords = [bv(o) + p for o, p in zip(src.origin, (w.pos["pr"], w.pos["pc"]))]
    for name in names:
        frag.tag.fields[name] = assumptions.field(w, src.tensor, name, coords)
    if src.window is not None:
        frag.tag.fields[LIVE] = z3.If(segments.in_window(src, coords[0]),
                                      z3.BitVecVal(1, 64), z3.BitVecVal(0, 64))


def prefix_sum(w, op: Op) -> None:
    if not routing.prefix_sum(w, op):
        vectors.prefix_sum(w, op)


def element(w, op: Op) -> None:
    if routing.element(w, op):
        return
    if isinstance(op.arg("v").type, IndexVectorType):
        # an index vector the pass does not know (a prefix sum it does not model): its
        # entry is unknown, not data. As data it would be a free variable, and every
        # segment started at it an index-range, coverage or race "error" no run reaches
        # (the library's 128-expert gate-up got such errors)
        w.not_modelled(op, "an entry of an index vector the pass does not know")
        w.env[op.result] = None
        return
    vectors.element(w, op)


PACK = IdiomPack(
    "routing",
    "MoE routing: index vectors, counts, prefix sums and placement on the device, "
    "segments, gathers, tag assumptions",
    rules={"segment": segments.segment,
           "indices.load": routing.indices_load,
           "indices.round_up": routing.round_up,
           "indices.element": element,
           "scan.prefix_sum": prefix_sum,
           "tag.assume": assumptions.tag_assume,
           "gather.tma": gather.gather_into_stage,
           "gather.cp_async": gather.gather_into_stage,
           "gather.load": gather.gather_load,
           "indices.from_frag": vectors.from_frag,
           "scatter.store": vectors.scatter},
    refines={"load": load, "tile": segments.tile, "frag.coord": vectors.frag_coord,
             "reduce.row": vectors.reduce_row, "store": vectors.store,
             **{opcode: joins.elementwise for opcode in (*memory.ELEMENTWISE, "math.cmp")}})
