"""Rules for global tiles, shared-memory buffers, fragments and vector memory ops."""

from __future__ import annotations

import math

from argus.ir import gather_chunks
from argus.ir.types import (BarrierType, DType, FragmentType, GlobalTensorType, GlobalTileType,
                            IndexVectorType, SmemBufferType, SmemTileType)
from argus.layout.hopper.wgmma import accumulator_name, accumulator_width
from argus.limits import SMEM_PER_BLOCK

from . import layouts
from .base import Args, describe, rule

SWIZZLE_BYTES = {"none": 0, "32B": 32, "64B": 64, "128B": 128}


def _shape_text(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


@rule("tile")
def tile(fx, a: Args):
    x = a.get("x")
    box = a.static_shape("box")
    coords = a.scalars("coords")
    if hasattr(x, "type") and isinstance(x.type, FragmentType):
        return _column_block(fx, a, x, box, coords)
    if not hasattr(x, "type") or not isinstance(x.type, (GlobalTensorType, SmemTileType)):
        a.fail("x", f"can tile a global tensor, a shared-memory tile or an accumulator "
               f"fragment, not {describe(x)}")
    shape = x.type.shape
    if len(box) != len(shape) or len(coords) != len(shape):
        a.fail("box", f"{x.name} has rank {len(shape)}; box {_shape_text(box)} and "
               f"{len(coords)} coordinate(s) must have the same rank")
    for axis, (b, d) in enumerate(zip(box, shape)):
        if isinstance(d, int) and b > d:
            a.fail("box", f"tile {_shape_text(box)} is larger than {x.name} "
                   f"{_shape_text(shape)} in dimension {axis} ({b} > {d})",
                   "make the box at most the tensor's extent, or pad the tensor")
    if isinstance(x.type, GlobalTensorType):
        return fx.emit("tile", (x, *coords), a.call, GlobalTileType(x.name, box, x.type.dtype),
                       {"box": box})
    for axis, (b, d) in enumerate(zip(box, shape)):
        if d % b:
            a.fail("box", f"box {_shape_text(box)} does not divide the smem tile "
                   f"{_shape_text(shape)} in dimension {axis}")
    t = x.type
    return fx.emit("smem.tile", (x, *coords), a.call,
                   SmemTileType(t.buffer, box, t.dtype, t.swizzle), {"box": box})


def _column_block(fx, a: Args, x, box, coords):
    """tile(acc, (64, n), (0, j)): columns j*n .. j*n+n-1 of a wgmma accumulator, itself an
    accumulator of width n (each thread's registers for those columns, no copy)."""
    t = x.type
    layout = t.layout
    width = accumulator_width(layout)
    if width is None or tuple(t.shape) != (64, width):
        a.fail("x", f"a register fragment can be tiled only when it is one wgmma accumulator "
               f"(64 x N in wgmma_acc_m64n<N>); {x.name} is {_shape_text(t.shape)} in {layout}",
               "tile the accumulator before converting it to another layout")
    if len(box) != 2 or len(coords) != 2:
        a.fail("box", f"a column block of {x.name} takes a 2-D box and 2 coordinates",
               "tile(acc, (64, 64), (0, j))")
    rows, cols = box
    if rows != 64 or coords[0] != 0:
        a.fail("box", f"a block of an accumulator spans all 64 rows: box (64, n) at (0, j), "
               f"got box {_shape_text(box)} at ({', '.join(describe(c) for c in coords)})",
               "tile(acc, (64, 64), (0, j))")
    if cols % 8 or width % cols:
        a.fail("box", f"the block width {cols} must be a multiple of 8 that divides the "
               f"accumulator's {width} columns (whole 8-column groups of registers)",
               f"use one of {', '.join(str(n) for n in range(8, width + 1, 8) if width % n == 0)}")
    if isinstance(coords[1], int) and not 0 <= coords[1] < width // cols:
        a.fail("coords", f"column block {coords[1]} of {x.name}: it has {width // cols} blocks "
               f"of {cols} columns (0..{width // cols - 1})")
    return fx.emit("frag.slice", (x, coords[1]), a.call,
                   FragmentType(box, t.dtype, accumulator_name(cols)), {"box": box})


@rule("smem")
def smem(fx, a: Args):
    dtype = a.dtype("dtype")
    shape = a.static_shape("shape")
    stages = a.static_int("stages", minimum=1)
    swizzle = a.static_str("swizzle", tuple(SWIZZLE_BYTES) + ("widest",))
    row_bytes = shape[-1] * dtype.bits // 8
    if swizzle == "widest":     # the widest swizzle whose rows the tile fills
        swizzle = next((name for name, span in sorted(SWIZZLE_BYTES.items(),
                                                      key=lambda kv: -kv[1])
                        if span and row_bytes % span == 0), "none")
    span = SWIZZLE_BYTES[swizzle]
    if span and row_bytes % span:
        a.fail("swizzle", f"a {swizzle} swizzle needs rows of a multiple of {span} bytes; "
               f"the inner dimension {shape[-1]} x {dtype} is {row_bytes} bytes",
               f"use {span * 8 // dtype.bits} elements per row or a narrower swizzle")
    total = stages * math.prod(shape) * dtype.bits // 8
    if total > SMEM_PER_BLOCK:   # cannot fit whatever else the block has: refused before the passes
        a.fail("stages", f"{stages} stages of {_shape_text(shape)} {dtype} are {total} B, over "
               f"the {SMEM_PER_BLOCK} B of shared memory a Hopper block can have",
               f"use at most {max(1, SMEM_PER_BLOCK // max(1, total // stages))} stages, or a "
               f"smaller tile")
    return fx.emit("smem.alloc", (), a.call, SmemBufferType(stages, shape, dtype, swizzle),
                   {"stages": stages, "shape": shape, "dtype": str(dtype), "swizzle": swizzle})


def check_layout(a: Args, name: str, layout, shape) -> str:
    if not isinstance(layout, str) or not layouts.known(layout):
        a.fail(name, f"unknown fragment layout {layout!r}", f"known: {layouts.known_names()}")
    problem = layouts.shape_problem(layout, shape)
    if problem:
        a.fail(name, problem)
    return layout


@rule("fragment")
def fragment(fx, a: Args):
    dtype = a.dtype("dtype")
    shape = a.static_shape("shape")
    layout = check_layout(a, "layout", a.get("layout"), shape)
    attrs = {"shape": shape, "dtype": str(dtype), "layout": layout}
    init = a.get("init")
    if init is not None:
        if not isinstance(init, (int, float)):
            a.fail("init", f"init must be a compile-time number, got {describe(init)}")
        attrs["init"] = init
    return fx.emit("frag.alloc", (), a.call, FragmentType(shape, dtype, layout), attrs)


def same_shape(a: Args, dst_name: str, dst, src_name: str, src):
    if tuple(dst.type.shape) != tuple(src.type.shape):
        a.fail(src_name, f"shape mismatch: {dst_name} is {_shape_text(dst.type.shape)}, "
               f"{src_name} is {_shape_text(src.type.shape)}",
               "tile both sides with the same box")


def same_dtype(a: Args, dst_name: str, dst, src_name: str, src):
    if dst.type.dtype != src.type.dtype:
        a.fail(src_name, f"dtype mismatch: {dst_name} is {dst.type.dtype}, {src_name} is "
               f"{src.type.dtype}", f"convert with cast({src_name}, {dst.type.dtype})")


@rule("assign")
def assign(fx, a: Args):
    dst = a.value("dst", FragmentType, what="a fragment")
    made_by = fx.b.defining.get(id(dst))
    if made_by is not None and made_by != "frag.alloc":
        a.fail("dst", f"assign writes into a fragment declared with fragment(...); "
               f"{dst.name} is the value of an expression, not a register fragment",
               "declare the loop-carried value with fragment(dtype, shape, layout) and "
               "assign into that")
    src = a.get("src")
    if isinstance(src, (int, float)) and not isinstance(src, bool):
        return fx.emit("frag.assign", (dst, src), a.call)
    src = a.value("src", FragmentType, what="a fragment or a number")
    same_shape(a, "dst", dst, "src", src)
    same_dtype(a, "dst", dst, "src", src)
    if src.type.layout != dst.type.layout:
        a.fail("src", f"layout mismatch: dst is {dst.type.layout}, src is {src.type.layout}",
               f"convert_layout(src, \"{dst.type.layout}\") first")
    return fx.emit("frag.assign", (dst, src), a.call)


@rule("load")
def load(fx, a: Args):
    src = a.value("src", GlobalTileType, SmemTileType, what="a global or smem tile")
    layout = check_layout(a, "layout", a.get("layout"), src.type.shape)
    return fx.emit("load", (src,), a.call, FragmentType(src.type.shape, src.type.dtype, layout),
                   {"layout": layout})


@rule("store")
def store(fx, a: Args):
    dst = a.value("dst", GlobalTileType, SmemTileType, what="a global or smem tile")
    src = a.value("src", FragmentType, what="a fragment")
    same_shape(a, "dst", dst, "src", src)
    same_dtype(a, "dst", dst, "src", src)
    return fx.emit("store", (dst, src), a.call)


@rule("load_indices")
def load_indices(fx, a: Args):
    src = a.value("src", GlobalTileType, what="a 1-D int32 global tile")
    if src.type.dtype != DType.int32 or len(src.type.shape) != 1:
        a.fail("src", f"index vectors come from 1-D int32 tiles, got {src.type}")
    return fx.emit("indices.load", (src,), a.call, IndexVectorType(src.type.shape[0]))


@rule("gather")
def gather(fx, a: Args):
    src = a.value("src", GlobalTensorType, what="a global tensor")
    rows = a.value("rows", IndexVectorType, what="an index vector (load_indices)")
    col = a.scalar("col")
    cols = a.static_int("cols", minimum=1)
    shape = (rows.type.length, cols)
    layout = check_layout(a, "layout", a.get("layout"), shape)
    return fx.emit("gather.load", (src, rows, col), a.call,
                   FragmentType(shape, src.type.dtype, layout), {"cols": cols, "layout": layout})


def _gather_into_smem(a: Args) -> tuple:
    """(dst, src, rows, col, bar) of a gather into a shared-memory tile, one row per index."""
    dst = a.value("dst", SmemTileType, what="a shared-memory tile")
    src = a.value("src", GlobalTensorType, what="a global tensor")
    rows = a.value("rows", IndexVectorType, what="an index vector")
    col = a.scalar("col")
    bar = a.value("bar", BarrierType, what="one mbarrier (bars[s])")
    if dst.type.shape[0] != rows.type.length:
        a.fail("rows", f"{rows.type.length} rows gathered into a tile of {dst.type.shape[0]} rows")
    return dst, src, rows, col, bar


@rule("gather_tma")
def gather_tma(fx, a: Args):
    return fx.emit("gather.tma", _gather_into_smem(a), a.call)


@rule("gather_cp_async")
def gather_cp_async(fx, a: Args):
    if fx.in_elect:
        raise fx.error(a.call, "gather_cp_async is executed by every thread of the warpgroup "
                       "(each copies its chunks and arrives once); it cannot run inside "
                       "elect_one()", "call it after the `with elect_one():` block, in the "
                       "role's own body, and count 128 arrivals per warpgroup in "
                       "mbarrier_init")
    if not fx.in_role:
        raise fx.error(a.call, "gather_cp_async runs in a role: the warpgroups that execute it "
                       "each gather the whole tile", "call it inside `with role(...):`")
    dst, src, rows, col, bar = _gather_into_smem(a)
    if dst.type.dtype != src.type.dtype:
        a.fail("src", f"{src.name} is {src.type.dtype}, the tile is {dst.type.dtype}")
    if len(dst.type.shape) != 2 or len(src.type.shape) != 2:
        a.fail("dst", "gather_cp_async copies rows of a 2-D tensor into a 2-D tile")
    why = gather_chunks.problem(dst.type.shape[0], dst.type.shape[1] * dst.type.dtype.bits // 8)
    if why:
        a.fail("dst", why, "gather 64 or 128 rows of a multiple of 16 bytes")
    return fx.emit("gather.cp_async", (dst, src, rows, col, bar), a.call)


@rule("scatter")
def scatter(fx, a: Args):
    dst = a.value("dst", GlobalTensorType, what="a global tensor")
    rows = a.value("rows", IndexVectorType, what="an index vector")
    col = a.scalar("col")
    src = a.value("src", FragmentType, what="a fragment")
    if src.type.shape[0] != rows.type.length:
        a.fail("src", f"{src.type.shape[0]} fragment rows scattered to {rows.type.length} rows")
    if len(dst.type.shape) != len(src.type.shape):
        a.fail("src", f"a {len(src.type.shape)}-D fragment scattered into the "
               f"{len(dst.type.shape)}-D {dst.name}", "scatter a 1-D fragment into a 1-D "
               "tensor (one element per index) or 2-D rows into a 2-D tensor")
    if len(dst.type.shape) == 1 and col != 0:
        a.fail("col", f"a 1-D scatter has no column tile, got {describe(col)}", "pass col=0")
    return fx.emit("scatter.store", (dst, rows, col, src), a.call)


@rule("atomic_add")
def atomic_add(fx, a: Args):
    dst = a.value("dst", GlobalTileType, what="a global tile")
    src = a.value("src", FragmentType, what="a fragment")
    same_shape(a, "dst", dst, "src", src)
    return fx.emit("atomic.add", (dst, src), a.call)
