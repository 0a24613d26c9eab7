"""Bug: the consumers release the stage only in their own block.

The 2-block cluster GEMM (gemm_nn, CM=2, WG=1, BN=64, S=12): the empty barriers rightly
count WG * CM = 2 arrivals per phase (each stage is written by both blocks' producers), but
the consumers arrive only on their own block's barrier (`arrive(empty[x])` instead of the
loop of remote arrives `for r in range(CM): arrive(empty[x], cta=r)`): each phase gets one
arrival and never completes. The producers wait on empty forever once the ring of 12
stages has gone round once. The fix: release the stage in every block of the cluster.

Expected: protocol.arrival-count at line 79.
Interpreter: a deadlock at empty[0] of a block (its producer waits for the release of step 0).
"""

import numpy as np

from argus.lang import (Tensor, arrive, assign, assume, cast, cluster_rank, cluster_sync, const,
                        coord, elect_one, expect_tx, fence_mbarrier_init, fp32, fragment, kernel,
                        mbarrier, mbarrier_init, nbytes, role, schedule, smem, store, tag,
                        tag_assert, tile, tma_load, wait, warpgroup_index, wgmma, wgmma_commit,
                        wgmma_fence, wgmma_wait)

DT = "bf16"
BLOCKS = 132     # one persistent block per SM, 66 clusters of two
CM = 2           # blocks per cluster along M: the B tile multicast to both
WG = 1           # one consumer warpgroup: BM = 64


@kernel(grid=(BLOCKS,), block=128 * (1 + WG), cluster=(CM, 1, 1))
def gemm(A: Tensor["M", "K", DT], B: Tensor["K", "N", DT], C: Tensor["M", "N", DT],
         BM: const = 64 * WG, BN: const = 64, BK: const = 64, S: const = 12, GROUP: const = 8):
    assume(K % 8 == 0)
    assume(N % 8 == 0)
    KT = (K + BK - 1) // BK
    a_s = smem(DT, (BM, BK), stages=S, swizzle="128B")
    b_s = smem(DT, (BK, BN), stages=S, swizzle="128B")
    full = mbarrier(S)
    empty = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
            mbarrier_init(empty[s], WG * CM)    # the consumers of every block it feeds
    fence_mbarrier_init()
    rank = cluster_rank()
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
                    tma_load(tile(b_s[s], (BK // CM, BN), (rank, 0)),
                             tile(B, (BK // CM, BN), (k * CM + rank, tn)), full[s],
                             multicast=(1 << CM) - 1)

    with role("consumer", warpgroups=(1,), regs=232):
        wg = warpgroup_index()
        acc = fragment(fp32, (64, BN), "wgmma_acc_m64n64", init=0.0)
        for i, cm, tn in schedule((M + BM * CM - 1) // (BM * CM), (N + BN - 1) // BN,
                                  order="grouped", group=GROUP, by="cluster"):
            tm = cm * CM + rank
            assign(acc, 0.0)
            for k in range(KT):
                g = i * KT + k
                s = g % S
                wait(full[s], (g // S) & 1)
                wgmma_fence()
                wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s], b_major="mn")
                wgmma_commit()
                wgmma_wait(1)
                if k > 0:
                    with elect_one():
                        arrive(empty[(g - 1) % S])       # free the stage
            wgmma_wait(0)
            with elect_one():
                arrive(empty[(i * KT + KT - 1) % S])
            out = cast(acc, DT)
            dst = tile(C, (64, BN), (tm * WG + wg, tn))
            tag_assert(tag(out).row == coord(dst)[0] and tag(out).col == coord(dst)[1])
            store(dst, out)
    cluster_sync()     # no block leaves while its peer may still write or arrive into it


def reference(A, B):
    """C = A @ B in fp32 (the caller rounds and compares)."""
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32)
