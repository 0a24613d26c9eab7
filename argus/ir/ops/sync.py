"""Fences and barriers between threads, proxies and blocks."""

from .spec import op

SPECS = [
    op("fence.proxy_async", "sync", doc="orders generic-proxy smem writes before async reads"),
    op("fence.mbarrier_init", "sync", doc="makes mbarrier.init visible to the cluster"),
    op("barrier.block", "sync"),
    op("barrier.named", "sync", doc="attrs: id, threads"),
    op("barrier.cluster", "sync"),
]
