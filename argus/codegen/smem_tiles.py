"""How a 2-D shared-memory tile is laid out, and the wgmma operand it is to a descriptor.

One convention, shared by the TMA lowering and the descriptor lowering (and stated in
docs/design/codegen.md): an R x C tile of `eb`-byte elements with swizzle span W bytes is
stored in column chunks of w = W / eb elements; chunk j holds columns [j*w, (j+1)*w) of every
row, row r at byte r*W of the chunk, the chunks R*W bytes apart, and the hardware swizzle is
applied to the absolute address. So one TMA box (w columns x R rows, the densest box a
swizzle allows) fills one chunk, and a band of rows [r0, r0 + h) is a view with the same
chunk stride. For swizzle "none" the tile is plain row-major (one chunk of C columns).

Read as a wgmma operand this is the canonical K-major layout when the columns are K (A, and
B of `x @ W.T`), and the canonical MN-major layout when the columns are N (B of `x @ W`).
"""

from __future__ import annotations

from dataclasses import dataclass

from argus.layout import Layout
from argus.layout.hopper.smem import ATOM_ROWS, SWIZZLE_SPAN_BYTES, SmemOperand
from argus.layout.swizzle import ComposedLayout, hopper_swizzle

from .errors import CodegenError


@dataclass(frozen=True)
class TileGeometry:
    """A rows x cols view inside a buffer stage whose chunks are `chunk_stride` bytes apart."""
    rows: int
    cols: int
    element_bytes: int
    swizzle: str
    chunk_stride: int          # bytes between column chunks (stage rows * span)
    row0: int = 0              # first row of this view inside the stage (static part)

    @property
    def span(self) -> int:
        return SWIZZLE_SPAN_BYTES[self.swizzle] if self.swizzle != "none" else \
            self.cols * self.element_bytes

    @property
    def chunk_cols(self) -> int:
        return self.span // self.element_bytes

    @property
    def chunks(self) -> int:
        return max(1, -(-self.cols // self.chunk_cols))

    def byte_offset(self, r: int, c: int) -> int:
        """Unswizzled byte offset of element (r, c) from the stage base (static view)."""
        return (c // self.chunk_cols) * self.chunk_stride + (self.row0 + r) * self.span \
            + (c % self.chunk_cols) * self.element_bytes

    def band(self, row0: int, rows: int) -> "TileGeometry":
        return TileGeometry(rows, self.cols, self.element_bytes, self.swizzle,
                            self.chunk_stride, self.row0 + row0)


def stage_geometry(shape: tuple[int, ...], element_bytes: int, swizzle: str) -> TileGeometry:
    if len(shape) != 2:
        raise CodegenError(f"shared-memory tiles must be 2-D for the Hopper backend, got "
                           f"shape {shape}")
    rows, cols = shape
    span = SWIZZLE_SPAN_BYTES[swizzle] if swizzle != "none" else cols * element_bytes
    w = span // element_bytes
    if swizzle != "none" and cols % w:
        raise CodegenError(f"a {rows}x{cols} tile with {swizzle} swizzle needs a column count "
                           f"that is a multiple of {w} ({span} B of {8 * element_bytes}-bit "
                           "elements)")
    return TileGeometry(rows, cols, element_bytes, swizzle, rows * span)


def as_operand(view: TileGeometry, major: str) -> SmemOperand:
    """The view as a wgmma operand (mn x k) whose layout is exactly the convention above.

    major "K": rows are MN, columns are K. major "MN": rows are K, columns are MN.
    """
    eb, span, w = view.element_bytes, view.span, view.chunk_cols
    if view.swizzle == "none":
        raise CodegenError("wgmma operands without a swizzle are not generated yet; use "
                           "swizzle=\"128B\" (or 64B/32B) on the smem buffer")
    if view.rows % ATOM_ROWS:
        raise CodegenError(f"a wgmma operand view needs a multiple of {ATOM_ROWS} rows, got "
                           f"{view.rows}")
    base = view.row0 * span
    atom_rows_bytes = ATOM_ROWS * span
    if major == "K":
        mn, k = view.rows, view.cols
        layout = Layout(((ATOM_ROWS, mn // ATOM_ROWS), (w, k // w)),
                        ((span, atom_rows_bytes), (eb, view.chunk_stride)))
    else:
        k, mn = view.rows, view.cols
        layout = Layout(((w, mn // w), (ATOM_ROWS, k // ATOM_ROWS)),
                        ((eb, view.chunk_stride), (span, atom_rows_bytes)))
    composed = ComposedLayout(hopper_swizzle(view.swizzle), base, layout)
    return SmemOperand(mn, k, eb, major, view.swizzle, composed)
