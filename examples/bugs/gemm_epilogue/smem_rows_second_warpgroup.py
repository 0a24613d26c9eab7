"""Bug: Both consumer warpgroups store their 64 rows into rows 0..63 of the shared tile (the
warpgroup index is left out of the shared-memory tile coordinate).

In every tile warpgroup 2's rows land on warpgroup 1's, so the TMA store copies whichever
was stored last to rows 0..63 of C's tile, and rows 64..127 of the shared tile are never
written: C gets zeros there.

A copy of argus/kernels/gemm.py's gemm_nt with EPILOGUE="smem_tma" with this one bug.
Expected: tag.smem-race at line 86.
Interpreter: rows 64..127 of every tile of C hold zeros (shared memory never written there).
"""

import numpy as np

from argus.lang import (Tensor, arrive, assign, assume, cast, const, coord, elect_one,
                        expect_tx, fence_mbarrier_init, fence_proxy_async, fp32, fragment,
                        kernel, mbarrier, mbarrier_init, named_barrier, nbytes, role, schedule,
                        smem, store, sync_block, tag, tag_assert, tile, tma_load, tma_store,
                        tma_store_commit, tma_store_wait, wait, warpgroup_index, wgmma,
                        wgmma_commit, wgmma_fence, wgmma_wait)

DT = "bf16"
BLOCKS = 132
ACC = "wgmma_acc_m64n256"


@kernel(grid=(BLOCKS,), block=384, cluster=(1, 1, 1))
def gemm(A: Tensor["M", "K", DT], B: Tensor["N", "K", DT], C: Tensor["M", "N", DT],
         BM: const = 128, BN: const = 256, BK: const = 64, S: const = 3, GROUP: const = 8):
    assume(K % 8 == 0)     # 16-byte TMA row strides of A and B (and C's rows)
    assume(N % 8 == 0)
    KT = (K + BK - 1) // BK
    a_s = smem(DT, (BM, BK), stages=S, swizzle="128B")
    b_s = smem(DT, (BN, BK), stages=S, swizzle="128B")
    c_s = smem(DT, (BM, BN), swizzle="128B")     # the epilogue tile, stored by TMA
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
            for i, tm, tn in schedule((M + BM - 1) // BM, (N + BN - 1) // BN, order="grouped",
                                      group=GROUP):
                for k in range(KT):
                    g = i * KT + k
                    s = g % S
                    wait(empty[s], ((g // S) & 1) ^ 1)
                    expect_tx(full[s], nbytes(a_s[s]) + nbytes(b_s[s]))
                    tma_load(a_s[s], tile(A, (BM, BK), (tm, k)), full[s])
                    tma_load(b_s[s], tile(B, (BN, BK), (tn, k)), full[s])

    with role("consumer", warpgroups=(1, 2), regs=232):
        wg = warpgroup_index()
        acc = fragment(fp32, (64, BN), ACC, init=0.0)
        for i, tm, tn in schedule((M + BM - 1) // BM, (N + BN - 1) // BN, order="grouped",
                                  group=GROUP):
            assign(acc, 0.0)
            for k in range(KT):
                g = i * KT + k
                s = g % S
                wait(full[s], (g // S) & 1)
                wgmma_fence()
                wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s])
                wgmma_commit()
                # keep this step's wgmma in flight; the previous one is done: free its stage
                wgmma_wait(1)
                if k > 0:
                    with elect_one():
                        arrive(empty[(g - 1) % S])
            wgmma_wait(0)
            with elect_one():
                arrive(empty[(i * KT + KT - 1) % S])
            out = cast(acc, DT)
            band = tile(C, (64, BN), (tm * 2 + wg, tn))
            tag_assert(tag(out).row == coord(band)[0] and tag(out).col == coord(band)[1])
            # the previous tile's TMA store must have read c_s before it is overwritten
            if wg == 0:
                with elect_one():
                    tma_store_wait(0)
            named_barrier(1, 256)
            store(tile(c_s[0], (64, BN), (0, 0)), out)
            fence_proxy_async()
            named_barrier(1, 256)
            if wg == 0:
                with elect_one():
                    tma_store(tile(C, (BM, BN), (tm, tn)), c_s[0])
                    tma_store_commit()
        if wg == 0:
            with elect_one():
                tma_store_wait(0)


def reference(A, B):
    """C = A @ B^T in fp32 (the caller rounds and compares)."""
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32).T
