"""ldmatrix / stmatrix: the 8x8 b16 matrices of an (8 * num) x 8 shared-memory tile between
shared memory and one warp's registers. Every warp of the warpgroup makes the same access
(the ldmatrix atoms are warp layouts: lane = thread % 32), as in the interpreter; stmatrix
is issued by the first warp only, so the tile is written once. Lane l gives the address of
row l of the stacked tile (rows of matrix l / 8), at its byte in the tile convention with
the hardware swizzle applied; register v of the fragment is half v % 2 of the instruction's
32-bit register v / 2 (argus.layout.hopper.ldmatrix)."""

from __future__ import annotations

from argus.ir.types import DType

from ..errors import CodegenError
from ..values import Fragment, SmemTile
from .elementwise import declare, materialize
from .memory import SWIZZLE_BITS

FROM16 = {DType.bf16: "argus::from_bf16", DType.fp16: "argus::from_f16"}
PACK = {DType.bf16: "argus::pack_bf16x2", DType.fp16: "argus::pack_f16x2"}


def _row_address(ctx, op, tile: SmemTile, num: int) -> str:
    g = tile.geometry
    if (g.rows, g.cols) != (8 * num, 8):
        raise CodegenError(f"ldmatrix/stmatrix .x{num} move an {8 * num}x8 stack of 8x8 "
                           f"matrices; this tile is {g.rows}x{g.cols}", op.loc)
    if tile.dtype not in FROM16:
        raise CodegenError(f"ldmatrix/stmatrix move bf16 or fp16, not {tile.dtype}", op.loc)
    mask = ((1 << SWIZZLE_BITS[g.swizzle]) - 1) << 4
    em = ctx.em
    em.line(f"const argus::u32 argus_off = (argus::u32)(((argus_lane % 32) % {8 * num} + "
            f"{g.row0}) * {g.span});")
    return f"{tile.address} + (argus_off ^ ((argus_off >> 3) & {mask}u))"


def _ldmatrix(ctx, op):
    src = ctx.get(op.arg("src"), op)
    if not isinstance(src, SmemTile):
        raise CodegenError("ldmatrix reads a shared-memory tile", op.loc)
    num, trans = int(op.attrs["num"]), bool(op.attrs.get("trans"))
    out = declare(ctx, op.result, op)
    em = ctx.em
    em.open("", f"ldmatrix .x{num}{' .trans' if trans else ''}")
    addr = _row_address(ctx, op, src, num)
    em.line(f"argus::u32 argus_m[{num}];")
    em.line(f"argus::ldmatrix<{num}, {'true' if trans else 'false'}>(argus_m, {addr});")
    conv = FROM16[src.dtype]
    for i in range(num):
        em.line(f"{out.reg(str(2 * i))} = {conv}((argus::u16)(argus_m[{i}] & 0xffffu)); "
                f"{out.reg(str(2 * i + 1))} = {conv}((argus::u16)(argus_m[{i}] >> 16));")
    em.close()


def _stmatrix(ctx, op):
    dst, src = ctx.get(op.arg("dst"), op), ctx.get(op.arg("src"), op)
    if not isinstance(dst, SmemTile) or not isinstance(src, Fragment):
        raise CodegenError("stmatrix writes a register fragment into a shared-memory tile",
                           op.loc)
    num, trans = int(op.attrs["num"]), bool(op.attrs.get("trans"))
    want = f"stmatrix_x{num}" + ("_trans" if trans else "")
    if src.layout not in (want, want.replace("stmatrix", "ldmatrix")):
        raise CodegenError(f"stmatrix .x{num} stores a fragment in layout {want}, not "
                           f"{src.layout}", op.loc, f"convert_layout(x, \"{want}\") first")
    if src.cast is not None:
        src = materialize(ctx, op, src)
    em = ctx.em
    em.open("if (argus_lane < 32)", f"stmatrix .x{num}{' .trans' if trans else ''}: the "
            "first warp writes the tile")
    addr = _row_address(ctx, op, dst, num)
    pack = PACK[dst.dtype]
    regs = ", ".join(f"{pack}({src.reg(str(2 * i))}, {src.reg(str(2 * i + 1))})"
                     for i in range(num))
    em.line(f"const argus::u32 argus_m[{num}] = {{{regs}}};")
    em.line(f"argus::stmatrix<{num}, {'true' if trans else 'false'}>({addr}, argus_m);")
    em.close()


RULES = {"ldmatrix": _ldmatrix, "stmatrix": _stmatrix}
