"""Fences and barriers."""

from __future__ import annotations


def _call(text):
    def rule(ctx, op):
        ctx.em.line(text)
    return rule


def _named(ctx, op):
    ctx.em.line(f"argus::named_barrier_sync<{op.attrs['id']}, {op.attrs['threads']}>();")


RULES = {
    "fence.proxy_async": _call("argus::fence_proxy_async_shared();"),
    "fence.mbarrier_init": _call("argus::fence_mbarrier_init();"),
    "barrier.block": _call("__syncthreads();"),
    "barrier.named": _named,
    "barrier.cluster": _call("argus::cluster_arrive();\nargus::cluster_wait();"),
}
