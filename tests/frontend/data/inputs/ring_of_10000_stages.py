# A pipeline depth typed with two zeros too many: 10000 stages of a 64 x 64 bf16 tile.
from argus.lang import (Tensor, bf16, const, elect_one, fence_mbarrier_init, kernel,
                        mbarrier, mbarrier_init, smem, sync_block)


@kernel(grid=(1,), block=128)
def deep_ring(A: Tensor["M", "K", bf16], S: const = 10000):
    a_s = smem(bf16, (64, 64), stages=S, swizzle="128B")
    full = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
    fence_mbarrier_init()
    sync_block()
