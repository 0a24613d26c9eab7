# A cluster shape written as the grid's size: 2**31 blocks per cluster.
from argus.lang import Tensor, block_id, fp32, kernel, load, store, tile


@kernel(grid=(4,), block=128, cluster=(2147483648, 1, 1))
def huge_cluster(X: Tensor["M", "N", fp32], Y: Tensor["M", "N", fp32]):
    t = block_id("x")
    store(tile(Y, (64, 64), (t, 0)), load(tile(X, (64, 64), (t, 0)), "blocked"))
