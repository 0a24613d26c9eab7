# Sixteen warpgroups in one block: twice what a Hopper block can have.
from argus.lang import Tensor, block_id, fp32, kernel, load, store, tile


@kernel(grid=(4,), block=2048)
def wide_block(X: Tensor["M", "N", fp32], Y: Tensor["M", "N", fp32]):
    t = block_id("x")
    store(tile(Y, (64, 64), (t, 0)), load(tile(X, (64, 64), (t, 0)), "blocked"))
