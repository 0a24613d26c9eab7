"""Rules for TMA copies."""

from __future__ import annotations

from argus.ir.types import GlobalTileType, SmemTileType

from .base import Args, rule
from .mbarrier import barrier
from .memory import same_dtype, same_shape


@rule("tma_load")
def tma_load(fx, a: Args):
    dst = a.value("dst", SmemTileType, what="a shared-memory tile (buf[s])")
    src = a.value("src", GlobalTileType, what="a global tile: tile(A, box, coords)")
    same_shape(a, "dst", dst, "src", src)
    same_dtype(a, "dst", dst, "src", src)
    bar = barrier(a)
    operands = (dst, src, bar)
    if a.get("multicast") is not None:
        mask, size = a.cluster_rank("multicast", "a multicast TMA load")
        if isinstance(mask, int) and not 0 < mask < 1 << size:
            a.fail("multicast", f"multicast mask {mask:#b} names CTAs outside the cluster of "
                   f"{size} blocks", f"set bits 0..{size - 1} only, e.g. multicast="
                   f"{(1 << size) - 1} for all of them")
        operands += (mask,)
    return fx.emit("tma.load", operands, a.call)


@rule("tma_store")
def tma_store(fx, a: Args):
    dst = a.value("dst", GlobalTileType, what="a global tile")
    src = a.value("src", SmemTileType, what="a shared-memory tile")
    same_shape(a, "dst", dst, "src", src)
    same_dtype(a, "dst", dst, "src", src)
    return fx.emit("tma.store", (dst, src), a.call)


@rule("tma_store_commit")
def tma_store_commit(fx, a: Args):
    return fx.emit("tma.store_commit", (), a.call)


@rule("tma_store_wait")
def tma_store_wait(fx, a: Args):
    return fx.emit("tma.store_wait", (), a.call, attrs={"pending": a.static_int("pending", 0)})
