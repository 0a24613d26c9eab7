"""Rules for fences and barriers."""

from __future__ import annotations

from argus.limits import COMPILER_BARRIERS, NAMED_BARRIERS

from .base import Args, rule


def _plain(name: str, opcode: str):
    @rule(name)
    def emit(fx, a: Args):
        return fx.emit(opcode, (), a.call)
    return emit


_plain("fence_proxy_async", "fence.proxy_async")
_plain("fence_mbarrier_init", "fence.mbarrier_init")
_plain("sync_block", "barrier.block")
_plain("cluster_sync", "barrier.cluster")


@rule("named_barrier")
def named_barrier(fx, a: Args):
    bid = a.static_int("id", minimum=0)
    if bid >= NAMED_BARRIERS:
        a.fail("id", f"named barriers are 0..{NAMED_BARRIERS - 1}, got {bid}")
    if bid in COMPILER_BARRIERS:
        a.fail("id", f"named barrier ids {COMPILER_BARRIERS.start}..{COMPILER_BARRIERS.stop - 1} "
               f"are the compiler's (its warpgroup exchanges use them), got {bid}",
               f"use an id in 1..{COMPILER_BARRIERS.start - 1}")
    threads = a.static_int("threads", minimum=32)
    if threads % 32:
        a.fail("threads", f"a named barrier counts whole warps; {threads} is not a multiple of 32")
    return fx.emit("barrier.named", (), a.call, attrs={"id": bid, "threads": threads})
