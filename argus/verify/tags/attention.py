"""Registration of the flash-attention rules (one table, merged into rules.RULES): index
and predicate fragments, masks, row reductions, the online softmax, layout conversions,
wgmma with A in registers, loop-carried state; and two wrappers of shared rules (a proved
mask specification, an unnormalised accumulator reaching a store)."""

from __future__ import annotations

from argus.ir.nodes import Op

from . import convert, indices, mask, memory, reductions, softmax, wgmma_rs
from .meaning import SoftAcc, state
from .values import Fragment
from .violations import refute


def frag_assign(w, op: Op) -> None:
    dst = w.value(op.arg("dst"))
    if isinstance(dst, Fragment):
        state(w).assigned[id(dst)] = op.loc
    memory.frag_assign(w, op)


def guard_store(store_rule):
    """store: an attention accumulator must be divided by its row sum before it is stored."""
    def store(w, op: Op) -> None:
        src = w.value(op.arg("src"))
        if w.phase == "check" and isinstance(src, Fragment) and \
                isinstance(src.tag.meaning, SoftAcc):
            refute(w, op, "tag.softmax-normalise", True, layout=src.layout,
                   rows=src.shape[0], cols=src.shape[1],
                   message=lambda m, inst: ("stores the attention accumulator before "
                                            "dividing it by the row sum: the output is not a "
                                            "softmax average"),
                   hint="store cast(o_acc / l_i, dtype) after the key loop")
            src.tag = src.tag.copy()             # its products are checked at o / l only
            src.tag.contributions, src.tag.meaning = [], None
        store_rule(w, op)
    return store


RULES = {
    "frag.coord": indices.coord,
    "math.cmp": softmax.math_op,
    "reduce.row": reductions.reduce_row,
    "frag.convert": convert.convert,
    "frag.assign": frag_assign,
    "wgmma.mma": wgmma_rs.mma,
    "tag.assert": mask.tag_assert,
}
for _opcode in memory.ELEMENTWISE:   # the softmax's own ops, the others by its fallback
    RULES[_opcode] = softmax.math_op
