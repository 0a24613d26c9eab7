"""Global tiles, shared-memory buffers and views, register fragments, stores.

A global tile is its tensor plus the element coordinates of its corner (tile coordinates
times the box). Shared memory is one dynamic allocation; each buffer is placed at a fixed
offset (1024-byte aligned when swizzled). Fragments are per-thread register arrays through
their TV layout (argus.codegen.registers); stores and atomics to global memory are
argus.codegen.lower.indexed's (one path for every layout), a store to shared memory writes
each register pair at its swizzled byte.
"""

from __future__ import annotations

import numpy as np

from argus.ir.types import DType, GlobalTileType, SmemTileType
from argus.layout.hopper.wgmma import accumulator_name, accumulator_width

from ..context import SMEM_ALIGN_PLAIN, SMEM_ALIGN_SWIZZLED
from ..errors import CodegenError
from ..registers import register_layout
from ..smem_tiles import stage_geometry

from ..values import C_ELEMENT, Fragment, GlobalTile, SmemBuffer, SmemTile, c_float
from .elementwise import declare
from .indexed import PACK, atomic_global, store_global


def _bytes(dtype: DType) -> int:
    return dtype.bits // 8


def _tile(ctx, op):
    tensor = ctx.get(op.arg("tensor"), op)
    box = tuple(op.attrs["box"])
    coords = [ctx.expr(c, op) for c in op.args("coords")]
    if len(coords) != len(box):
        raise CodegenError(f"tile of a {len(box)}-D box needs {len(box)} coordinates", op.loc)
    origin = []
    for c, b in zip(coords, box):
        origin.append(str(int(c) * b) if c.lstrip("-").isdigit() else f"({c}) * {b}")
    ctx.bind(op.result, GlobalTile(tensor, box, tuple(origin)))


def _smem_alloc(ctx, op):
    t = op.result.type
    if len(t.shape) != 2:
        raise CodegenError(f"shared-memory buffers must be 2-D for the Hopper backend, got "
                           f"{t.shape}", op.loc)
    geometry = stage_geometry(tuple(t.shape), _bytes(t.dtype), t.swizzle)
    stage_bytes = t.nbytes_per_stage
    align = SMEM_ALIGN_SWIZZLED if t.swizzle != "none" else SMEM_ALIGN_PLAIN
    stage_bytes = -(-stage_bytes // align) * align
    offset = ctx.allocate_smem(stage_bytes * t.stages, align)
    name = ctx.em.name(op.result.name)
    ctx.em.line(f"const argus::u32 {name} = argus_smem + {offset};  // {t.stages} x "
                f"{t.shape[0]}x{t.shape[1]} {t.dtype}, swizzle {t.swizzle}, "
                f"{stage_bytes} B per stage")
    ctx.bind(op.result, SmemBuffer(op.result.name, name, t.dtype, t.stages, stage_bytes,
                                   tuple(t.shape), t.swizzle))
    ctx.geometries[op.result.name] = geometry


def _smem_stage(ctx, op):
    buf = ctx.get(op.arg("buffer"), op)
    s = ctx.expr(op.arg("stage"), op)
    addr = f"({buf.address} + {buf.stage_bytes} * ({s}))" if s != "0" else buf.address
    ctx.bind(op.result, SmemTile(buf.name, addr, buf.dtype, ctx.geometries[buf.name]))


def _smem_tile(ctx, op):
    view = ctx.get(op.arg("view"), op)
    box = tuple(op.attrs["box"])
    coords = [ctx.expr(c, op) for c in op.args("coords")]
    g = view.geometry
    if coords[1:] != ["0"] * (len(coords) - 1) or box[1:] != (g.cols,):
        raise CodegenError(f"a shared-memory tile must span whole rows (box {box} of "
                           f"{(g.rows, g.cols)}); tile along the first dimension only", op.loc,
                           "tile(a_s[s], (64, BK), (wg, 0))")
    rows, row0 = box[0], coords[0]
    if g.swizzle != "none" and rows % 8:
        raise CodegenError(f"a band of {rows} rows of a {g.swizzle}-swizzled tile does not "
                           "start on a swizzle pattern boundary; use a multiple of 8 rows",
                           op.loc)
    band = g.band(0, rows)   # same chunk stride, its own base address
    addr = view.address if row0 == "0" else f"({view.address} + {rows * g.span} * ({row0}))"
    ctx.bind(op.result, SmemTile(view.buffer, addr, view.dtype, band))


def _frag_alloc(ctx, op):
    t = op.result.type
    frag = declare(ctx, op.result, op)
    init = op.attrs.get("init")
    if init is not None:
        ctx.em.line("#pragma unroll")
        ctx.em.line(f"for (int argus_i = 0; argus_i < {frag.count}; ++argus_i) "
                    f"{frag.name}[argus_i] = {c_float(round_value(t.dtype, float(init)))};")


def round_value(dtype: DType, x: float) -> float:
    """A constant as a register of `dtype` holds it (the interpreter's rounding)."""
    if x != x or abs(x) == float("inf"):
        return x
    if dtype == DType.int32:
        return float(int(x))
    if dtype == DType.fp16:
        return float(np.float16(x))
    if dtype == DType.bf16:
        bits = int(np.float32(x).view(np.uint32))
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return float(np.uint32(bits).view(np.float32))
    return x


def _store(ctx, op):
    dst, src = ctx.get(op.arg("dst"), op), ctx.get(op.arg("src"), op)
    if isinstance(dst, SmemTile) and isinstance(src, Fragment):
        _store_shared(ctx, op, dst, src)
        return
    if not isinstance(dst, GlobalTile):
        raise CodegenError("this store is not generated yet", op.loc,
                           "store a register fragment to a global or shared-memory tile")
    if not isinstance(src, Fragment):
        raise CodegenError("only register fragments can be stored", op.loc)
    store_global(ctx, op, dst, src)


SWIZZLE_BITS = {"none": 0, "32B": 1, "64B": 2, "128B": 3}


def _store_shared(ctx, op, dst, src):
    """st.shared of each register (pair) at its byte in the tile convention, swizzled."""
    out_dtype = dst.dtype
    value_dtype = src.cast or src.dtype
    if value_dtype != out_dtype:
        raise CodegenError(f"storing a {value_dtype} fragment into a {out_dtype} shared tile; "
                           f"cast it first: cast(x, {out_dtype})", op.loc)
    g = dst.geometry
    if (g.rows, g.cols) != tuple(src.shape):
        raise CodegenError(f"store of a {src.shape} fragment into a {g.rows}x{g.cols} shared "
                           "tile", op.loc)
    layout = register_layout(src.layout, src.shape)
    pack = PACK.get(out_dtype)
    if layout.vector(2) < 2 or pack is None:
        raise CodegenError("shared-memory stores of this fragment layout or dtype are not "
                           "generated yet (16-bit values in a layout that keeps column pairs "
                           "in register pairs, like the accumulator, are)", op.loc)
    eb, w = g.element_bytes, g.chunk_cols
    mask = ((1 << SWIZZLE_BITS[g.swizzle]) - 1) << 4
    em = ctx.em
    em.open("", f"{g.rows}x{g.cols} tile, {g.swizzle} swizzle: chunks of {w} columns, "
                f"{g.chunk_stride} B apart")
    em.line("#pragma unroll")
    em.open(f"for (int argus_v = 0; argus_v < {src.count}; argus_v += 2)")
    em.line(f"const int argus_r = {layout.coord(0, 'argus_v')};")
    em.line(f"const int argus_c = {layout.coord(1, 'argus_v')};")
    em.line(f"const argus::u32 argus_off = (argus::u32)((argus_c / {w}) * {g.chunk_stride}"
            f" + (argus_r + {g.row0}) * {g.span} + (argus_c % {w}) * {eb});")
    em.line(f"argus::st_shared_u32({dst.address} + (argus_off ^ ((argus_off >> 3) & "
            f"{mask}u)), {pack}({src.reg('argus_v')}, {src.reg('argus_v + 1')}));")
    em.close()
    em.close()


def _atomic_add(ctx, op):
    """red.global.add of each register (pair) at the element the layout gives it; fp32."""
    dst, src = ctx.get(op.arg("dst"), op), ctx.get(op.arg("src"), op)
    if not (isinstance(dst, GlobalTile) and isinstance(src, Fragment)):
        raise CodegenError("atomic_add adds a register fragment into a global tile", op.loc)
    atomic_global(ctx, op, dst, src)


def _frag_slice(ctx, op):
    """A column block of an accumulator: registers [block * n/2, block * n/2 + n/2) of the
    thread's array (wgmma's accumulator steps 8 columns per 4 registers), no copy."""
    src = ctx.get(op.arg("x"), op)
    if not isinstance(src, Fragment) or accumulator_width(src.layout) is None:
        raise CodegenError("a column block of a value that is not a wgmma accumulator", op.loc)
    cols = int(op.attrs["box"][1])
    block = ctx.expr(op.arg("block"), op)
    per = cols // 2
    start = str(int(block) * per) if block.lstrip("-").isdigit() else f"({block}) * {per}"
    first = start if src.first == "0" else f"{src.first} + {start}"
    ctx.bind(op.result, Fragment(src.name, src.dtype, (64, cols), accumulator_name(cols),
                                 per, cast=src.cast, first=first))


def _tag_assert(ctx, op):
    ctx.em.line(f"// tag_assert {op.attrs.get('text', '')}: proved by `argus check`, no code")


def _tag_add(ctx, op):
    # extra tag fields are the verifier's: the data (and its registers) stay where they are
    ctx.bind(op.result, ctx.get(op.arg("x"), op))


def _tag_assume(ctx, op):
    ctx.em.line(f"// tag assumption {op.attrs.get('text', '')}: used by `argus check`, no code")


def _tag_heads(ctx, op):
    ctx.em.line(f"// heads of {op.arg('tensor').name}: {op.attrs['cols']} columns, group "
                f"{op.attrs['group']} (used by `argus check`, no code)")


RULES = {"tile": _tile, "smem.alloc": _smem_alloc, "smem.stage": _smem_stage,
         "smem.tile": _smem_tile, "frag.alloc": _frag_alloc,
         "frag.slice": _frag_slice, "store": _store, "atomic.add": _atomic_add,
         "tag.assert": _tag_assert, "tag.add": _tag_add, "tag.assume": _tag_assume,
         "tag.heads": _tag_heads}
