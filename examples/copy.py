"""A plain copy kernel: each block copies one BM x BN tile of X into Y through registers."""

import numpy as np

from argus.lang import Tensor, assume, block_id, coord, const, fp32, kernel, load, store, tag
from argus.lang import tag_assert, tile


@kernel(grid=("M // BM", "N // BN"), block=128)
def copy(X: Tensor["M", "N", fp32], Y: Tensor["M", "N", fp32], BM: const = 64, BN: const = 64):
    assume(M % BM == 0)
    assume(N % BN == 0)
    tm = block_id("x")
    tn = block_id("y")
    src = tile(X, (BM, BN), (tm, tn))
    dst = tile(Y, (BM, BN), (tm, tn))
    x = load(src, "blocked")
    tag_assert(tag(x).row == coord(dst)[0] and tag(x).col == coord(dst)[1])
    store(dst, x)


def reference(X):
    return np.array(X, copy=True)
