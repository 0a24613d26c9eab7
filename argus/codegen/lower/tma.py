"""TMA: one bulk tensor copy per column chunk of the destination (the densest box the
swizzle allows, see argus.codegen.smem_tiles), all completing on the same mbarrier; with a
multicast mask each box lands at the same offset in every CTA of the mask."""

from __future__ import annotations

from argus.limits import TMA_BOX_MAX_DIM

from ..errors import CodegenError
from ..values import GlobalTile, SmemTile


def _load(ctx, op):
    dst, src, bar = (ctx.get(op.arg(n), op) for n in ("dst", "src", "bar"))
    multicast = op.arg("multicast")
    mask = ctx.expr(multicast, op) if multicast is not None else None
    if not (isinstance(dst, SmemTile) and isinstance(src, GlobalTile)):
        raise CodegenError("tma_load copies a global tile into a shared-memory tile", op.loc)
    g = dst.geometry
    if len(src.box) != 2 or tuple(src.box) != (g.rows, g.cols):
        raise CodegenError(f"TMA box {src.box} does not match the destination "
                           f"{g.rows}x{g.cols}", op.loc)
    if g.rows > TMA_BOX_MAX_DIM:
        raise CodegenError(f"a TMA box has at most {TMA_BOX_MAX_DIM} rows, this one {g.rows}",
                           op.loc, "split the tile into two loads")
    w = g.chunk_cols if g.swizzle != "none" else g.cols
    if g.swizzle == "none" and w > TMA_BOX_MAX_DIM:
        raise CodegenError(f"a TMA box has at most {TMA_BOX_MAX_DIM} columns, this one {w}",
                           op.loc)
    # a segment's box is addressed in the tensor it is part of: rows past the segment's end
    # are the tensor's next rows, not zeros (TMA clips at the tensor's bounds only); they
    # reach only the M/N rows of a product whose store the segment masks
    tmap = ctx.tensor_map(src.tensor.root, (w, g.rows), g.swizzle)
    row = src.origin[0] if src.tensor.root_row0 == "0" else \
        f"{src.tensor.root_row0} + {src.origin[0]}"
    for j in range(g.chunks):
        addr = dst.address if j == 0 else f"{dst.address} + {j * g.chunk_stride}"
        col = src.origin[1] if j == 0 else f"{src.origin[1]} + {j * w}"
        if mask is None:
            ctx.em.line(f"argus::tma_load<2>({addr}, &{tmap}, {bar.address}, "
                        f"{{{col}, {row}}});")
        else:     # the box lands at this offset in every CTA of the mask, on each one's bar
            ctx.em.line(f"argus::tma_load_multicast<2>({addr}, &{tmap}, {bar.address}, "
                        f"(argus::u16)({mask}), {{{col}, {row}}});")


def _store(ctx, op):
    dst, src = (ctx.get(op.arg(n), op) for n in ("dst", "src"))
    if not (isinstance(dst, GlobalTile) and isinstance(src, SmemTile)):
        raise CodegenError("tma_store copies a shared-memory tile to a global tile", op.loc)
    g = src.geometry
    if len(dst.box) != 2 or tuple(dst.box) != (g.rows, g.cols):
        raise CodegenError(f"TMA box {dst.box} does not match the source {g.rows}x{g.cols}",
                           op.loc)
    if dst.tensor.parent is not None:
        raise CodegenError("tma_store into a segment cannot drop the rows past the "
                           "segment's end (TMA clips at the tensor's bounds only)", op.loc,
                           "store() the fragment into the segment's tile instead")
    w = g.chunk_cols if g.swizzle != "none" else g.cols
    tmap = ctx.tensor_map(dst.tensor, (w, g.rows), g.swizzle)
    for j in range(g.chunks):
        addr = src.address if j == 0 else f"{src.address} + {j * g.chunk_stride}"
        col = dst.origin[1] if j == 0 else f"{dst.origin[1]} + {j * w}"
        ctx.em.line(f"argus::tma_store<2>(&{tmap}, {addr}, {{{col}, {dst.origin[0]}}});")


def _store_commit(ctx, op):
    ctx.em.line("argus::tma_store_commit_group();")


def _store_wait(ctx, op):
    # what the DSL's wait promises (and `argus check` relies on) is that the shared memory
    # of the older stores may be written again: wait for their reads, not their global
    # writes (which complete before the kernel does)
    ctx.em.line(f"argus::tma_store_wait_read<{op.attrs.get('pending', 0)}>();")


RULES = {"tma.load": _load, "tma.store": _store, "tma.store_commit": _store_commit,
         "tma.store_wait": _store_wait}
