"""TMA: bulk tensor copies of a box between global and shared memory."""

from ._stub import surface


@surface
def tma_load(dst, src, bar, multicast=None):
    """Copy the global tile `src` into smem tile `dst`, completing bytes on `bar`; with
    multicast=mask, into every block of the cluster in the mask."""


@surface
def tma_store(dst, src):
    """Copy smem tile `src` to the global tile `dst` (fence_proxy_async first)."""


@surface
def tma_store_commit():
    """Close the group of outstanding TMA stores."""


@surface
def tma_store_wait(pending=0):
    """Wait until at most `pending` of this thread's committed store groups (the newest)
    still read their shared memory: the buffers of the others may be written again. Their
    global writes complete by the end of the kernel."""
