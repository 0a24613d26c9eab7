# A comment saved as Latin-1: café (not UTF-8).
import numpy as np

from argus.lang import Tensor, assume, block_id, const, fp32, kernel, load, store, tile


@kernel(grid=("M // BM", "N // BN"), block=128)
def small_copy(X: Tensor["M", "N", fp32], Y: Tensor["M", "N", fp32], BM: const = 64,
               BN: const = 64):
    assume(M % BM == 0)
    assume(N % BN == 0)
    tm = block_id("x")
    tn = block_id("y")
    x = load(tile(X, (BM, BN), (tm, tn)), "blocked")
    store(tile(Y, (BM, BN), (tm, tn)), x)


def reference(X):
    return np.array(X, copy=True)
