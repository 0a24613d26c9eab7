"""Rules for ldmatrix / stmatrix."""

from __future__ import annotations

from argus.ir.types import FragmentType, SmemTileType

from .base import Args, rule
from .memory import same_shape


def _num(a: Args, tile) -> tuple[int, bool]:
    num = a.get("num")
    if num not in (1, 2, 4):
        a.fail("num", f"ldmatrix/stmatrix move 1, 2 or 4 matrices, got {num!r}")
    trans = bool(a.get("trans"))
    if len(tile.shape) != 2 or tile.shape[0] * tile.shape[1] != 64 * num:
        a.fail("num", f"{num} 8x8 matrices are {64 * num} elements; the tile {tile.shape} has "
               f"{tile.shape[0] * tile.shape[1] if len(tile.shape) == 2 else '?'}")
    if tile.dtype.bits != 16:
        a.fail("src" if "src" in a else "dst", f"ldmatrix/stmatrix move 16-bit elements, "
               f"got {tile.dtype}")
    return num, trans


@rule("ldmatrix")
def ldmatrix(fx, a: Args):
    src = a.value("src", SmemTileType, what="a shared-memory tile")
    num, trans = _num(a, src.type)
    layout = f"ldmatrix_x{num}" + ("_trans" if trans else "")
    return fx.emit("ldmatrix", (src,), a.call, FragmentType(src.type.shape, src.type.dtype,
                   layout), {"num": num, "trans": trans})


@rule("stmatrix")
def stmatrix(fx, a: Args):
    dst = a.value("dst", SmemTileType, what="a shared-memory tile")
    src = a.value("src", FragmentType, what="a fragment")
    num, trans = _num(a, dst.type)
    same_shape(a, "dst", dst, "src", src)
    return fx.emit("stmatrix", (dst, src), a.call, attrs={"num": num, "trans": trans})
