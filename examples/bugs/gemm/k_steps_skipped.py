"""Bug: the consumer's wgmma sits under `if k % 2 == 0` inside the k loop (a leftover of
a two-step unroll): every other k step is waited for and released but never multiplied,
so half of K is never accumulated. The k coverage must count a product only where the ifs
around its site let it run (before 2026-12-07 the check ignored them and this verified).

A copy of examples/gemm.py with this one bug.
Expected: tag.k-coverage at line 61.
"""

import numpy as np

from argus.lang import (Tensor, arrive, assume, bf16, cast, coord, const, expect_tx,
                        fence_mbarrier_init, fp32, fragment, kernel, mbarrier, mbarrier_init,
                        nbytes, role, schedule, smem, store, sync_block, tag, tag_assert, tile,
                        tma_load, wait, warpgroup_index, wgmma, wgmma_commit, wgmma_fence,
                        wgmma_wait, elect_one, assign)

BLOCKS = 132     # one persistent block per SM of an H100/H200


@kernel(grid=(BLOCKS,), block=384, cluster=(1, 1, 1))
def gemm(A: Tensor["M", "K", bf16], B: Tensor["N", "K", bf16], C: Tensor["M", "N", bf16],
         BM: const = 128, BN: const = 256, BK: const = 64, S: const = 4):
    assume(M % BM == 0)
    assume(N % BN == 0)
    assume(K % BK == 0)
    KT = K // BK
    a_s = smem(bf16, (BM, BK), stages=S, swizzle="128B")
    b_s = smem(bf16, (BN, BK), stages=S, swizzle="128B")
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
            for i, tm, tn in schedule(M // BM, N // BN, order="grouped", group=8):
                for k in range(KT):
                    g = i * KT + k
                    s = g % S
                    wait(empty[s], ((g // S) & 1) ^ 1)
                    expect_tx(full[s], nbytes(a_s[s]) + nbytes(b_s[s]))
                    tma_load(a_s[s], tile(A, (BM, BK), (tm, k)), full[s])
                    tma_load(b_s[s], tile(B, (BN, BK), (tn, k)), full[s])

    with role("consumer", warpgroups=(1, 2), regs=232):
        wg = warpgroup_index()
        acc = fragment(fp32, (64, BN), "wgmma_acc_m64n256", init=0.0)
        for i, tm, tn in schedule(M // BM, N // BN, order="grouped", group=8):
            assign(acc, 0.0)
            for k in range(KT):
                g = i * KT + k
                s = g % S
                wait(full[s], (g // S) & 1)
                if k % 2 == 0:           # meant to skip nothing (a leftover of a 2-step unroll)
                    wgmma_fence()
                    wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s])
                    wgmma_commit()
                    wgmma_wait(0)
                with elect_one():
                    arrive(empty[s])
            out = cast(acc, bf16)
            dst = tile(C, (64, BN), (tm * 2 + wg, tn))
            tag_assert(tag(out).row == coord(dst)[0] and tag(out).col == coord(dst)[1])
            store(dst, out)


def reference(A, B):
    """C = A @ B^T in fp32, rounded to the output dtype by the caller's comparison."""
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32).T
