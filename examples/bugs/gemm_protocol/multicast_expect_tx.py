"""Bug: under TMA multicast, expect_tx counts only the half of B this block loads.

The cluster variant of examples/gemm.py: two blocks of a (2, 1, 1) cluster walk the
cluster tiles together (by="cluster"), take the M tiles 2 cm and 2 cm + 1 and share the B
tile; each loads one half of it (BN/2 rows) and multicasts it into both blocks' b_s[s]
(multicast=3), so each block's full[s] receives its A box plus *both* halves of B. The
bug: expect_tx counts nbytes(a_s[s]) plus only this block's own half, 16384 B short per
phase, so the phase can complete before the peer's half has landed. The right count is
nbytes(a_s[s]) + nbytes(b_s[s]). The empty ring counts the consumers of both blocks
(init 4, remote arrives), as every block's stage is written by both producers.

Expected: protocol.expect-tx at line 53 (`expect_tx(full[s], nbytes(a_s[s]) + nbytes(tile(b_s[s]`).
Interpreter: on a cluster of 2 blocks, a deadlock at full[s] (tx-count gone negative) or a race and a wrong C.
"""

import numpy as np

from argus.lang import (Tensor, arrive, assume, bf16, cast, coord, const, expect_tx,
                        fence_mbarrier_init, fp32, fragment, kernel, mbarrier, mbarrier_init,
                        nbytes, role, schedule, smem, store, sync_block, tag, tag_assert, tile,
                        tma_load, wait, warpgroup_index, wgmma, wgmma_commit, wgmma_fence,
                        wgmma_wait, elect_one, assign, cluster_rank, cluster_sync)

BLOCKS = 132     # one persistent block per SM of an H100/H200


@kernel(grid=(BLOCKS,), block=384, cluster=(2, 1, 1))
def gemm(A: Tensor["M", "K", bf16], B: Tensor["N", "K", bf16], C: Tensor["M", "N", bf16],
         BM: const = 128, BN: const = 256, BK: const = 64, S: const = 4):
    assume(M % (2 * BM) == 0)
    assume(N % BN == 0)
    assume(K % BK == 0)
    KT = K // BK
    a_s = smem(bf16, (BM, BK), stages=S, swizzle="128B")
    b_s = smem(bf16, (BN, BK), stages=S, swizzle="128B")
    rank = cluster_rank()
    full = mbarrier(S)
    empty = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
            mbarrier_init(empty[s], 4)
    fence_mbarrier_init()
    cluster_sync()

    with role("producer", warpgroups=(0,), regs=40):
        with elect_one():
            for i, cm, tn in schedule(M // (2 * BM), N // BN, order="grouped", group=8, by="cluster"):
                for k in range(KT):
                    g = i * KT + k
                    s = g % S
                    wait(empty[s], ((g // S) & 1) ^ 1)
                    expect_tx(full[s], nbytes(a_s[s]) + nbytes(tile(b_s[s], (BN // 2, BK), (rank, 0))))
                    tma_load(a_s[s], tile(A, (BM, BK), (cm * 2 + rank, k)), full[s])
                    tma_load(tile(b_s[s], (BN // 2, BK), (rank, 0)),
                             tile(B, (BN // 2, BK), (tn * 2 + rank, k)), full[s], multicast=3)

    with role("consumer", warpgroups=(1, 2), regs=232):
        wg = warpgroup_index()
        acc = fragment(fp32, (64, BN), "wgmma_acc_m64n256", init=0.0)
        for i, cm, tn in schedule(M // (2 * BM), N // BN, order="grouped", group=8, by="cluster"):
            assign(acc, 0.0)
            for k in range(KT):
                g = i * KT + k
                s = g % S
                wait(full[s], (g // S) & 1)
                wgmma_fence()
                wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s])
                wgmma_commit()
                wgmma_wait(0)
                with elect_one():
                    arrive(empty[s], cta=0)
                    arrive(empty[s], cta=1)
            out = cast(acc, bf16)
            dst = tile(C, (64, BN), ((cm * 2 + rank) * 2 + wg, tn))
            tag_assert(tag(out).row == coord(dst)[0] and tag(out).col == coord(dst)[1])
            store(dst, out)
    cluster_sync()


def reference(A, B):
    """C = A @ B^T in fp32, rounded to the output dtype by the caller's comparison."""
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32).T
