"""Fences and barriers."""

from ._stub import surface


@surface
def fence_proxy_async():
    """Make this thread's generic smem writes visible to the async proxy (TMA, wgmma)."""


@surface
def fence_mbarrier_init():
    """Make mbarrier inits visible to the cluster before anyone arrives remotely."""


@surface
def sync_block():
    """__syncthreads()."""


@surface
def named_barrier(id, threads):
    """bar.sync id, threads: synchronise a subset of warps. `id` is 0..11 (12..15 are the
    compiler's, argus.limits.COMPILER_BARRIERS); `threads` a multiple of 32."""


@surface
def cluster_sync():
    """barrier.cluster arrive + wait."""
