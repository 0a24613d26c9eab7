"""Split-K GEMM, written in the Argus DSL, for shapes with too few output tiles to fill the
GPU (M <= 256, say): the K loop is cut into SPLIT ranges, each (split, tile) pair is a work
item of the persistent schedule, and each adds its fp32 partial sums into a zeroed fp32
workspace W with red.global.add (atomic_add); `splitk_round` then rounds W into the output
and writes its zeros back, so argus.ops.matmul keeps one workspace between calls instead of
zeroing one per call (argus/ops/workspace.py). Every split runs the same number of k-steps
(KS), the last one's boxes past K are TMA zero fill, so the ring's stage/phase count stays
one per step for every work item.

W += A @ B^T (gemm_nt_splitk, B is N x K) or A @ B (gemm_nn_splitk, B is K x N).
Timed on an H100 (docs/perf-log.md, 2026-12-06): the split kernel alone runs at cuBLAS's
time on few-tile decode shapes; the rounding launch adds ~3 us.
"""

from argus.lang import (Tensor, arrive, assign, assume, atomic_add, block_id, cast, const,
                        coord, elect_one, expect_tx, fence_mbarrier_init, fp32, fragment, helper,
                        kernel, load, mbarrier, mbarrier_init, nbytes, role, schedule, smem, store,
                        sync_block, tag, tag_assert, tile, tma_load, wait, warpgroup_index, wgmma,
                        wgmma_commit, wgmma_fence, wgmma_wait)

DT = "bf16"
BLOCKS = 132
ACC = "wgmma_acc_m64n256"
WG = 2           # consumer warpgroups, 64 rows of the tile each (BM = 64 * WG)
CONSUMERS = (1, 2)          # their warpgroup indices (specialised with WG)


@helper
def ring_barriers(S):
    """The ring's barriers, initialised by one thread, before any thread waits: full[s]
    completes when both tiles of stage s have landed, empty[s] when every consumer
    warpgroup has released it."""
    full = mbarrier(S)
    empty = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
            mbarrier_init(empty[s], WG)
    fence_mbarrier_init()
    sync_block()
    return full, empty


@helper
def producer(A, B, a_s, b_s, full, empty, M, N, KS, BM, BN, BK, S, SPLIT, b_major):
    """Warpgroup 0: for every (split, tile) work item and each of its KS k-steps, wait until
    the step's stage is free, then load A's and B's tiles into it by TMA."""
    with role("producer", warpgroups=(0,), regs=40):
        with elect_one():
            for i, ks, tm, tn in schedule(SPLIT, (M + BM - 1) // BM, (N + BN - 1) // BN,
                                          order="row_major"):
                for kk in range(KS):
                    k = ks * KS + kk
                    g = i * KS + kk
                    s = g % S
                    wait(empty[s], ((g // S) & 1) ^ 1)
                    expect_tx(full[s], nbytes(a_s[s]) + nbytes(b_s[s]))
                    tma_load(a_s[s], tile(A, (BM, BK), (tm, k)), full[s])
                    if b_major == "k":      # B is N x K
                        tma_load(b_s[s], tile(B, (BN, BK), (tn, k)), full[s])
                    else:                   # B is K x N
                        tma_load(b_s[s], tile(B, (BK, BN), (k, tn)), full[s])


@helper
def consumer(W, a_s, b_s, full, empty, M, N, KS, BM, BN, BK, S, SPLIT, b_major):
    """The consumer warpgroups, 64 rows of the tile each: accumulate the split's KS k-steps
    with wgmma, then add the partial sums into the workspace."""
    with role("consumer", warpgroups=CONSUMERS, regs=232):
        wg = warpgroup_index()
        acc = fragment(fp32, (64, BN), ACC, init=0.0)
        for i, ks, tm, tn in schedule(SPLIT, (M + BM - 1) // BM, (N + BN - 1) // BN,
                                      order="row_major"):
            assign(acc, 0.0)
            for kk in range(KS):
                k = ks * KS + kk
                g = i * KS + kk
                s = g % S
                wait(full[s], (g // S) & 1)
                wgmma_fence()
                wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s], b_major=b_major)
                wgmma_commit()
                # keep this step's wgmma in flight; the previous one is done: free its stage
                wgmma_wait(1)
                if kk > 0:
                    with elect_one():
                        arrive(empty[(g - 1) % S])
            wgmma_wait(0)
            with elect_one():
                arrive(empty[(i * KS + KS - 1) % S])
            dst = tile(W, (64, BN), (tm * WG + wg, tn))
            tag_assert(tag(acc).row == coord(dst)[0] and tag(acc).col == coord(dst)[1])
            atomic_add(dst, acc)     # W starts at zero; the SPLIT partial sums meet here


@kernel(grid=(BLOCKS,), block=128 * (1 + WG), cluster=(1, 1, 1))
def gemm_nt_splitk(A: Tensor["M", "K", DT], B: Tensor["N", "K", DT], W: Tensor["M", "N", fp32],
            BM: const = 64 * WG, BN: const = 256, BK: const = 64, S: const = 4, SPLIT: const = 4):
    assume(K % 8 == 0)     # 16-byte TMA row strides of A and B (and C's rows)
    assume(N % 8 == 0)
    KT = (K + BK - 1) // BK
    KS = (KT + SPLIT - 1) // SPLIT   # k-steps per split; past K the TMA boxes read zeros
    a_s = smem(DT, (BM, BK), stages=S, swizzle="128B")
    b_s = smem(DT, (BN, BK), stages=S, swizzle="128B")
    full, empty = ring_barriers(S)
    producer(A, B, a_s, b_s, full, empty, M, N, KS, BM, BN, BK, S, SPLIT, b_major="k")
    consumer(W, a_s, b_s, full, empty, M, N, KS, BM, BN, BK, S, SPLIT, b_major="k")


@kernel(grid=(BLOCKS,), block=128 * (1 + WG), cluster=(1, 1, 1))
def gemm_nn_splitk(A: Tensor["M", "K", DT], B: Tensor["K", "N", DT], W: Tensor["M", "N", fp32],
            BM: const = 64 * WG, BN: const = 256, BK: const = 64, S: const = 4, SPLIT: const = 4):
    assume(K % 8 == 0)     # 16-byte TMA row strides of A and B (and C's rows)
    assume(N % 8 == 0)
    KT = (K + BK - 1) // BK
    KS = (KT + SPLIT - 1) // SPLIT   # k-steps per split; past K the TMA boxes read zeros
    a_s = smem(DT, (BM, BK), stages=S, swizzle="128B")
    b_s = smem(DT, (BK, BN), stages=S, swizzle="widest")    # 128B rows, or 64B/32B if narrow
    full, empty = ring_barriers(S)
    producer(A, B, a_s, b_s, full, empty, M, N, KS, BM, BN, BK, S, SPLIT, b_major="mn")
    consumer(W, a_s, b_s, full, empty, M, N, KS, BM, BN, BK, S, SPLIT, b_major="mn")


@kernel(grid=("(M + RM - 1) // RM", "(N + RN - 1) // RN"), block=128)
def splitk_round(W: Tensor["M", "N", fp32], C: Tensor["M", "N", DT], RM: const = 8,
                 RN: const = 256):
    """C = W rounded to DT, and W cleared: the workspace is all zeros again for the next
    split-K call (argus.ops.matmul keeps one per device and stream instead of zeroing a
    fresh one before each call). A block per RM x RN tile; the tiles past M and N load
    zeros and store nothing."""
    assume(N % 8 == 0)
    tm = block_id("x")
    tn = block_id("y")
    src = tile(W, (RM, RN), (tm, tn))
    dst = tile(C, (RM, RN), (tm, tn))
    x = load(src, "blocked")
    tag_assert(tag(x).row == coord(dst)[0] and tag(x).col == coord(dst)[1])
    store(dst, cast(x, DT))
    store(src, fragment(fp32, (RM, RN), "blocked", init=0.0))


def reference_gemm_nt_splitk(A, B):
    """W = A @ B^T in fp32 (W starts at zero)."""
    import numpy as np
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32).T


def reference_gemm_nn_splitk(A, B):
    """W = A @ B in fp32."""
    import numpy as np
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32)


def reference_splitk_round(W):
    """C = W (the caller rounds and compares; W is cleared)."""
    import numpy as np
    return np.asarray(W, np.float32).copy()
