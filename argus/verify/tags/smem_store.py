"""Stores of register fragments into shared memory, and where their bytes land.

A store `store(tile(c_s[s], box, coords), frag)` writes element (pr, pc) of the fragment
to element offset + (pr, pc) of the stage, at the byte the backend's convention gives it
(tma.StageLayout: column chunks as wide as the swizzle span, the swizzle on the address;
argus/codegen/lower/memory.py emits exactly that st.shared address). Each store is
recorded with its fragment's tag; the TMA stores that read the buffer (tma_store.py)
resolve every byte they read to the store of the same tile that wrote it.

Both directions between bytes and elements are proved once per view shape: the byte the
store writes for (pr, pc) holds element offset + (pr, pc) by the inverse of the stage
layout (`writes_its_elements`), and the TMA box image of a view reads element offset +
(pr, pc) at box element (pr, pc) (tma_store.py). Reasoning about which store wrote which
element read is then exact on elements.
"""

from __future__ import annotations

from functools import lru_cache

import z3

from argus.ir.nodes import Op
from argus.layout.swizzle import hopper_swizzle
from argus.verify.smt import bv, concrete, solve

from .program import place
from .tma import StageLayout, stage_layout
from .values import Fragment, SmemView, SmemWrite


def record(w, op: Op, view: SmemView, src) -> None:
    if not isinstance(src, Fragment):
        w.not_modelled(op, "a store into shared memory of a value that is not a fragment")
        return
    if tuple(src.shape) != tuple(view.shape) or stage_layout(view.buffer) is None:
        w.not_modelled(op, f"a store of a {tuple(src.shape)} fragment into a "
                           f"{tuple(view.shape)} view of {view.buffer.name}")
        return
    w.smem_writes.append(SmemWrite(
        view, src.tag.copy(), src.layout, tuple(src.shape), w.scope_vars(), tuple(w.path),
        w.role.name if w.role else None, w.role.warpgroup if w.role else None,
        place(w, op).order, op.loc, op))


def store_byte(stage: StageLayout, row, col):
    """The stage-relative byte the backend's st.shared writes element (row, col) to (terms):
    (col / w) * chunk_stride + row * span + (col % w) * eb, swizzled."""
    w = stage.chunk_cols
    plain = (z3.UDiv(bv(col), w) * stage.chunk_stride + bv(row) * stage.span
             + z3.URem(bv(col), w) * stage.element_bytes)
    return bv(hopper_swizzle(stage.swizzle)(plain))


def writes_its_elements(stage: StageLayout, offset, shape) -> bool:
    """For every (pr, pc) of a shape-sized view at `offset`: the byte the store writes holds
    element offset + (pr, pc) (the stage layout is inverted by element_at)."""
    o = tuple(concrete(x) for x in offset)
    if None in o:
        return _writes_its_elements(stage, offset, shape)
    return _cached_writes(stage, o, tuple(shape))


@lru_cache(maxsize=None)
def _cached_writes(stage: StageLayout, offset, shape) -> bool:
    return _writes_its_elements(stage, offset, shape)


def _writes_its_elements(stage, offset, shape) -> bool:
    pr, pc = z3.BitVecs("pr_w pc_w", 64)
    row, col = bv(offset[0]) + pr, bv(offset[1]) + pc
    r, c, ok = stage.element_at(store_byte(stage, row, col))
    return solve([z3.ULT(pr, shape[0]), z3.ULT(pc, shape[1]), z3.ULT(row, stage.rows),
                  z3.ULT(col, stage.cols), z3.Not(z3.And(ok, r == row, c == col))])[0] == z3.unsat
