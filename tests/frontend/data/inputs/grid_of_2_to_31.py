# One block per element instead of per tile: 2**31 blocks along x, one over gridDim.x.
from argus.lang import Tensor, block_id, fp32, kernel, load, store, tile


@kernel(grid=(2147483648,), block=128)
def per_element(X: Tensor["M", "N", fp32], Y: Tensor["M", "N", fp32]):
    t = block_id("x")
    store(tile(Y, (64, 64), (t, 0)), load(tile(X, (64, 64), (t, 0)), "blocked"))
