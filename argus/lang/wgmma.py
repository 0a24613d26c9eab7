"""wgmma: warpgroup matrix multiply-accumulate."""

from ._stub import surface


@surface
def wgmma_fence():
    """Order register accesses before the following wgmma (wgmma.fence)."""


@surface
def wgmma(acc, a, b, b_major="k"):
    """acc[m, n] += sum_k a[m, k] * b[n, k]. a: smem tile or register fragment (64 x K),
    b: smem tile, N x K when b_major="k" (K-major), K x N when b_major="mn" (e.g. V in
    P @ V); acc: fp32 fragment (64 x N) with the accumulator layout. Contract: A.k == B.k."""


@surface
def wgmma_commit():
    """Close the group of wgmma issued since the last commit."""


@surface
def wgmma_wait(pending=0):
    """Wait until at most `pending` wgmma groups are in flight."""
