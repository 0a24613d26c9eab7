"""TMA loads: each one is recorded as the writer of the shared-memory stage it fills (a
multicast one with its mask: bands.py composes a stage from several writers), and the
layout of a stage in shared memory.

The layout is the code generator's convention (argus/codegen/smem_tiles.py, restated here
so the verifier does not import the backend; tests/verify/tags/test_tags_layout.py keeps
the two equal): an R x C stage of eb-byte elements with swizzle span W bytes is stored in
column chunks of w = W / eb columns, row r of chunk j at byte j * R * W + r * W, and the
hardware swizzle applied to the address. One TMA box (w columns x R rows) fills one chunk;
with no swizzle the stage is plain row-major. Addresses are relative to the stage base,
which the allocator aligns to the swizzle pattern (1024 B for 128B).
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from argus.ir.nodes import Op
from argus.layout import Layout
from argus.layout.hopper import SmemOperand
from argus.layout.hopper.smem import ATOM_ROWS, SWIZZLE_SPAN_BYTES
from argus.layout.swizzle import ComposedLayout, hopper_swizzle

from .values import Barrier, GlobalTile, SmemBuffer, SmemView, Writer


def tma_load(w, op: Op) -> None:
    dst, src, bar = (w.value(op.arg(n)) for n in ("dst", "src", "bar"))
    multicast = op.arg("multicast")
    mask = w.value(multicast) if multicast is not None else None
    if not (isinstance(dst, SmemView) and isinstance(src, GlobalTile) and isinstance(bar, Barrier)):
        w.not_modelled(op, "a TMA load whose stage, tile or barrier is not known")
        return
    if multicast is not None and (mask is None or isinstance(mask, float)):
        w.not_modelled(op, "a multicast mask the pass cannot express")
        return
    if w.phase == "collect":     # a multicast load's stages: bands.py
        w.writers.append(Writer(dst, src, bar, w.scope_vars(), op.loc, tuple(w.path), mask))


@dataclass(frozen=True)
class StageLayout:
    rows: int
    cols: int
    element_bytes: int
    swizzle: str

    @property
    def span(self) -> int:
        if self.swizzle == "none":
            return self.cols * self.element_bytes
        return SWIZZLE_SPAN_BYTES[self.swizzle]

    @property
    def chunk_cols(self) -> int:
        return self.span // self.element_bytes

    @property
    def chunk_stride(self) -> int:
        return self.rows * self.span

    @property
    def legal(self) -> bool:
        return self.cols % self.chunk_cols == 0 and self.span % 16 == 0

    def byte(self, r: int, c: int) -> int:
        """Unswizzled byte offset of element (r, c) of the stage (ints)."""
        w = self.chunk_cols
        return (c // w) * self.chunk_stride + r * self.span + (c % w) * self.element_bytes

    def element_at(self, address):
        """(row, col, ok) of the element at a (swizzled) byte address, as z3 terms."""
        u = hopper_swizzle(self.swizzle).inverse()(address)
        chunk, within = z3.UDiv(u, self.chunk_stride), z3.URem(u, self.chunk_stride)
        r = z3.UDiv(within, self.span)
        inner = z3.URem(within, self.span)
        c = chunk * self.chunk_cols + z3.UDiv(inner, self.element_bytes)
        ok = z3.And(z3.URem(inner, self.element_bytes) == 0,
                    z3.ULT(chunk, self.cols // self.chunk_cols))
        return r, c, ok

    def operand(self, row0: int, rows: int, major: str) -> SmemOperand:
        """A band of `rows` rows from row `row0` read as a wgmma operand (swizzled only):
        K-major when the columns are K, MN-major when they are MN."""
        eb, span, w = self.element_bytes, self.span, self.chunk_cols
        base = row0 * span
        if major == "K":
            mn, k = rows, self.cols
            layout = Layout(((ATOM_ROWS, mn // ATOM_ROWS), (w, k // w)),
                            ((span, ATOM_ROWS * span), (eb, self.chunk_stride)))
        else:
            k, mn = rows, self.cols
            layout = Layout(((w, mn // w), (ATOM_ROWS, k // ATOM_ROWS)),
                            ((eb, self.chunk_stride), (span, ATOM_ROWS * span)))
        composed = ComposedLayout(hopper_swizzle(self.swizzle), base, layout)
        return SmemOperand(mn, k, eb, major, self.swizzle, composed)


def stage_layout(buf: SmemBuffer) -> StageLayout | None:
    if len(buf.shape) != 2:
        return None
    layout = StageLayout(buf.shape[0], buf.shape[1], buf.element_bytes, buf.swizzle)
    return layout if layout.legal else None
