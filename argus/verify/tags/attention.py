"""The flash-attention idiom pack (packs.py; rules.py states where it comes in the order):
index and predicate fragments, masks, row reductions, the online softmax, layout
conversions, wgmma with A in registers, loop-carried state; and three refinements of the
core pack's rules (the softmax's elementwise math, an assignment remembered for the
loop-carried state, an unnormalised accumulator reaching a store)."""

from __future__ import annotations

from argus.ir.nodes import Op

from . import convert, indices, mask, memory, reductions, softmax, wgmma_rs
from .packs import IdiomPack
from .meaning import SoftAcc, state
from .values import Fragment
from .violations import refute


def frag_assign(w, op: Op, base) -> None:
    dst = w.value(op.arg("dst"))
    if isinstance(dst, Fragment):
        state(w).assigned[id(dst)] = op.loc
    base(w, op)


def guard_store(w, op: Op, base) -> None:
    """store: an attention accumulator must be divided by its row sum before it is stored."""
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
    base(w, op)


PACK = IdiomPack(
    "attention",
    "flash attention: index and predicate fragments, masks, row statistics, the online "
    "softmax's rescaling, wgmma with A in registers",
    rules={"frag.coord": indices.coord,
           "reduce.row": reductions.reduce_row,
           "frag.convert": convert.convert,
           "wgmma.mma": wgmma_rs.mma,
           "tag.assert": mask.tag_assert},
    # the softmax's own math; every other elementwise op goes to the core rule
    refines={"frag.assign": frag_assign, "store": guard_store, "math.cmp": softmax.math_op,
             **{opcode: softmax.math_op for opcode in memory.ELEMENTWISE}})
