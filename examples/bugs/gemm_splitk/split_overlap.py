"""Bug: Each split starts at k-step ks * (KT // SPLIT) but runs KS = cdiv(KT, SPLIT) steps.

When KT % SPLIT != 0 the splits' ranges overlap: the k-steps where one split's range
runs into the next are added twice into W.

A copy of argus/kernels/gemm_splitk.py's gemm_nt_splitk with this one bug.
Expected: tag.k-coverage at line 79.
Interpreter: with KT = 5 k-steps and SPLIT = 4, W holds k-step 1's products twice.
"""

import numpy as np

from argus.lang import (Tensor, arrive, assign, assume, atomic_add, const, coord, elect_one,
                        expect_tx, fence_mbarrier_init, fp32, fragment, kernel, mbarrier,
                        mbarrier_init, nbytes, role, schedule, smem, store, sync_block, tag,
                        tag_assert, tile, tma_load, wait, warpgroup_index, wgmma, wgmma_commit,
                        wgmma_fence, wgmma_wait)

DT = "bf16"
BLOCKS = 132
ACC = "wgmma_acc_m64n256"


@kernel(grid=(BLOCKS,), block=384, cluster=(1, 1, 1))
def gemm(A: Tensor["M", "K", DT], B: Tensor["N", "K", DT], W: Tensor["M", "N", fp32],
         BM: const = 128, BN: const = 256, BK: const = 64, S: const = 4, SPLIT: const = 4):
    assume(K % 8 == 0)     # 16-byte TMA row strides of A and B (and C's rows)
    assume(N % 8 == 0)
    KT = (K + BK - 1) // BK
    KS = (KT + SPLIT - 1) // SPLIT   # k-steps per split; past K the TMA boxes read zeros
    a_s = smem(DT, (BM, BK), stages=S, swizzle="128B")
    b_s = smem(DT, (BN, BK), stages=S, swizzle="128B")
    full = mbarrier(S)
    empty = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
            mbarrier_init(empty[s], 2)
    fence_mbarrier_init()
    sync_block()

    with role("producer", warpgroups=(0,), regs=40):
        with elect_one():
            for i, ks, tm, tn in schedule(SPLIT, (M + BM - 1) // BM, (N + BN - 1) // BN,
                                          order="row_major"):
                for kk in range(KS):
                    k = ks * (KT // SPLIT) + kk
                    g = i * KS + kk
                    s = g % S
                    wait(empty[s], ((g // S) & 1) ^ 1)
                    expect_tx(full[s], nbytes(a_s[s]) + nbytes(b_s[s]))
                    tma_load(a_s[s], tile(A, (BM, BK), (tm, k)), full[s])
                    tma_load(b_s[s], tile(B, (BN, BK), (tn, k)), full[s])

    with role("consumer", warpgroups=(1, 2), regs=232):
        wg = warpgroup_index()
        acc = fragment(fp32, (64, BN), ACC, init=0.0)
        for i, ks, tm, tn in schedule(SPLIT, (M + BM - 1) // BM, (N + BN - 1) // BN,
                                      order="row_major"):
            assign(acc, 0.0)
            for kk in range(KS):
                k = ks * (KT // SPLIT) + kk
                g = i * KS + kk
                s = g % S
                wait(full[s], (g // S) & 1)
                wgmma_fence()
                wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s])
                wgmma_commit()
                # keep this step's wgmma in flight; the previous one is done: free its stage
                wgmma_wait(1)
                if kk > 0:
                    with elect_one():
                        arrive(empty[(g - 1) % S])
            wgmma_wait(0)
            with elect_one():
                arrive(empty[(i * KS + KS - 1) % S])
            dst = tile(W, (64, BN), (tm * 2 + wg, tn))
            tag_assert(tag(acc).row == coord(dst)[0] and tag(acc).col == coord(dst)[1])
            atomic_add(dst, acc)     # W starts at zero; the SPLIT partial sums meet here


def reference(A, B):
    """W = A @ B^T in fp32 (W starts at zero)."""
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32).T
