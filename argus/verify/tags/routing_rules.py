"""The MoE rules of the tag pass, by opcode (registered into rules.RULES): index vectors
and device-side routing (routing.py), segments (segments.py), gathers (gather.py) and tag
assumptions (assumptions.py). Ops shared with other families (`scan.prefix_sum`,
`indices.element`) dispatch on what they are applied to."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.verify.smt import bv

from . import assumptions, gather, joins, memory, routing, segments, vectors
from .meet import LIVE
from .values import Fragment, GlobalTile


def load(w, op: Op) -> None:
    """A plain load (memory.load), plus the routing fields the tag assumptions give the
    tensor's elements, and `live` for a tile of a segment."""
    memory.load(w, op)
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
    if not routing.element(w, op):
        vectors.element(w, op)


RULES = {
    "segment": segments.segment,
    "tile": segments.tile,
    "indices.load": routing.indices_load,
    "indices.round_up": routing.round_up,
    "indices.element": element,
    "scan.prefix_sum": prefix_sum,
    "tag.assume": assumptions.tag_assume,
    "gather.tma": gather.gather_tma,
    "gather.load": gather.gather_load,
    "load": load,
    "indices.from_frag": vectors.from_frag,
    "scatter.store": vectors.scatter,
}

# rules that handle only what is MoE's and pass everything else to the rule they wrap
WRAPPING = {"frag.coord": vectors.frag_coord, "reduce.row": vectors.reduce_row,
            "store": vectors.store}
for _opcode in (*memory.ELEMENTWISE, "math.cmp"):
    WRAPPING[_opcode] = joins.elementwise


def register(rules: dict) -> None:
    """Add the MoE rules to the tag pass's table (rules.py calls this last)."""
    rules.update(RULES)
    for opcode, rule in WRAPPING.items():
        prev = rules.get(opcode)
        if prev is None and opcode.startswith("math."):
            prev = memory.elementwise
        rules[opcode] = (lambda w, op, rule=rule, prev=prev: rule(w, op, prev))
