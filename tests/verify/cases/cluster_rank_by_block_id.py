"""A correct kernel the tag pass rejects: the cluster rank written as block_id("x") % CM.

The 2-block cluster GEMM of examples/bugs/gemm_cluster/ (gemm_nt, CM=2, WG=2, BN=128, S=6)
with the empty barriers counting both blocks' consumers (mbarrier_init(empty[s], WG * CM),
the fix of empty_counts_one_block.py), and `rank = block_id("x") % CM` instead of
`cluster_rank()`: on a 1-D grid of clusters (CM, 1, 1) the two are equal. The tag pass
reports tag.store-race with a second writer in block 0 at rank 1, which no run has
(block 0's rank is 0): the replay makes it a verify.replay warning. Its tag.stage-fill
error (no TMA load of the step writes b_s in rank 0) is about data, not a point, and is
not replayed: it stays a false error, a defect of the tag pass's model of block_id % CM.
"""

import numpy as np

from argus.lang import (block_id, Tensor, arrive, assign, assume, cast, cluster_rank, cluster_sync, const,
                        coord, elect_one, expect_tx, fence_mbarrier_init, fp32, fragment, kernel,
                        mbarrier, mbarrier_init, nbytes, role, schedule, smem, store, tag,
                        tag_assert, tile, tma_load, wait, warpgroup_index, wgmma, wgmma_commit,
                        wgmma_fence, wgmma_wait)

DT = "bf16"
BLOCKS = 132     # one persistent block per SM, 66 clusters of two
CM = 2           # blocks per cluster along M: the B tile multicast to both
WG = 2           # two consumer warpgroups: BM = 128


@kernel(grid=(BLOCKS,), block=128 * (1 + WG), cluster=(CM, 1, 1))
def gemm(A: Tensor["M", "K", DT], B: Tensor["N", "K", DT], C: Tensor["M", "N", DT],
         BM: const = 64 * WG, BN: const = 128, BK: const = 64, S: const = 6, GROUP: const = 8):
    assume(K % 8 == 0)
    assume(N % 8 == 0)
    KT = (K + BK - 1) // BK
    a_s = smem(DT, (BM, BK), stages=S, swizzle="128B")
    b_s = smem(DT, (BN, BK), stages=S, swizzle="128B")
    full = mbarrier(S)
    empty = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
            mbarrier_init(empty[s], WG * CM)
    fence_mbarrier_init()
    rank = block_id("x") % CM
    cluster_sync()

    with role("producer", warpgroups=(0,), regs=40):
        with elect_one():
            for i, cm, tn in schedule((M + BM * CM - 1) // (BM * CM), (N + BN - 1) // BN,
                                      order="grouped", group=GROUP, by="cluster"):
                tm = cm * CM + rank
                for k in range(KT):
                    g = i * KT + k
                    s = g % S
                    wait(empty[s], ((g // S) & 1) ^ 1)
                    expect_tx(full[s], nbytes(a_s[s]) + nbytes(b_s[s]))
                    tma_load(a_s[s], tile(A, (BM, BK), (tm, k)), full[s])
                    # this block's band of the shared B tile, into every block's stage
                    tma_load(tile(b_s[s], (BN // CM, BK), (rank, 0)),
                             tile(B, (BN // CM, BK), (tn * CM + rank, k)), full[s],
                             multicast=(1 << CM) - 1)

    with role("consumer", warpgroups=(1, 2), regs=232):
        wg = warpgroup_index()
        acc = fragment(fp32, (64, BN), "wgmma_acc_m64n128", init=0.0)
        for i, cm, tn in schedule((M + BM * CM - 1) // (BM * CM), (N + BN - 1) // BN,
                                  order="grouped", group=GROUP, by="cluster"):
            tm = cm * CM + rank
            assign(acc, 0.0)
            for k in range(KT):
                g = i * KT + k
                s = g % S
                wait(full[s], (g // S) & 1)
                wgmma_fence()
                wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s])
                wgmma_commit()
                wgmma_wait(1)
                if k > 0:
                    with elect_one():
                        for r in range(CM):      # free the stage in every block it fed
                            arrive(empty[(g - 1) % S], cta=r)
            wgmma_wait(0)
            with elect_one():
                for r in range(CM):
                    arrive(empty[(i * KT + KT - 1) % S], cta=r)
            out = cast(acc, DT)
            dst = tile(C, (64, BN), (tm * WG + wg, tn))
            tag_assert(tag(out).row == coord(dst)[0] and tag(out).col == coord(dst)[1])
            store(dst, out)
    cluster_sync()     # no block leaves while its peer may still write or arrive into it


def reference(A, B):
    """C = A @ B^T in fp32 (the caller rounds and compares)."""
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32).T
