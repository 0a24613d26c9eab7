"""ldmatrix / stmatrix."""

from ._stub import surface


@surface
def ldmatrix(src, num=4, trans=False):
    """Load `num` 8x8 matrices from smem into a warp fragment (layout ldmatrix_x<num>)."""


@surface
def stmatrix(dst, src, num=4, trans=False):
    """Store a warp fragment as `num` 8x8 matrices into smem."""
