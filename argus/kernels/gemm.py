"""The library GEMM, written in the Argus DSL: C = A @ B^T (gemm_nt, B is N x K, `x @ W.T`)
and C = A @ B (gemm_nn, B is K x N, `x @ W`), bf16 or fp16 in, fp32 accumulate.

One producer warpgroup streams A and B tiles by TMA into an S-stage ring (full/empty
mbarriers); two consumer warpgroups each own 64 rows of the BM x BN tile (BM = 128) and
accumulate with wgmma, keeping one k-step's wgmma in flight while the next is issued (a
stage is released once the wgmma reading it has retired); blocks walk the tiles
persistently in grouped order. Tails in M, N
and K need no special code: TMA fills out-of-bounds elements with zeros (so the last K
step adds nothing wrong) and the store drops what falls outside C. K and N must be
multiples of 8 (16-byte TMA row strides); the launcher says so otherwise.

DT, BLOCKS and the const parameters are specialised by argus.ops (parse overrides).
"""

from argus.lang import (Tensor, arrive, assign, assume, cast, const, coord, elect_one, expect_tx,
                        fence_mbarrier_init, fp32, fragment, kernel, mbarrier, mbarrier_init,
                        nbytes, role, schedule, smem, store, sync_block, tag, tag_assert, tile,
                        tma_load, wait, warpgroup_index, wgmma, wgmma_commit, wgmma_fence,
                        wgmma_wait)

DT = "bf16"
BLOCKS = 132     # one persistent block per SM of an H200
ACC = "wgmma_acc_m64n256"   # the accumulator layout of BN (specialised with BN)


@kernel(grid=(BLOCKS,), block=384, cluster=(1, 1, 1))
def gemm_nt(A: Tensor["M", "K", DT], B: Tensor["N", "K", DT], C: Tensor["M", "N", DT],
            BM: const = 128, BN: const = 256, BK: const = 64, S: const = 4, GROUP: const = 8):
    assume(K % 8 == 0)     # 16-byte TMA row strides of A and B (and C's rows)
    assume(N % 8 == 0)
    KT = (K + BK - 1) // BK
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
        for i, tm, tn in schedule((M + BM - 1) // BM, (N + BN - 1) // BN, order="grouped",
                                  group=GROUP):
            for k in range(KT):
                g = i * KT + k
                s = g % S
                wait(empty[s], ((g // S) & 1) ^ 1)
                with elect_one():
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
            dst = tile(C, (64, BN), (tm * 2 + wg, tn))
            tag_assert(tag(out).row == coord(dst)[0] and tag(out).col == coord(dst)[1])
            store(dst, out)


@kernel(grid=(BLOCKS,), block=384, cluster=(1, 1, 1))
def gemm_nn(A: Tensor["M", "K", DT], B: Tensor["K", "N", DT], C: Tensor["M", "N", DT],
            BM: const = 128, BN: const = 256, BK: const = 64, S: const = 4, GROUP: const = 8):
    assume(K % 8 == 0)     # 16-byte TMA row strides of A and B (and C's rows)
    assume(N % 8 == 0)
    KT = (K + BK - 1) // BK
    a_s = smem(DT, (BM, BK), stages=S, swizzle="128B")
    b_s = smem(DT, (BK, BN), stages=S, swizzle="128B")
    full = mbarrier(S)
    empty = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
            mbarrier_init(empty[s], 2)
    fence_mbarrier_init()
    sync_block()

    with role("producer", warpgroups=(0,), regs=40):
        for i, tm, tn in schedule((M + BM - 1) // BM, (N + BN - 1) // BN, order="grouped",
                                  group=GROUP):
            for k in range(KT):
                g = i * KT + k
                s = g % S
                wait(empty[s], ((g // S) & 1) ^ 1)
                with elect_one():
                    expect_tx(full[s], nbytes(a_s[s]) + nbytes(b_s[s]))
                    tma_load(a_s[s], tile(A, (BM, BK), (tm, k)), full[s])
                    tma_load(b_s[s], tile(B, (BK, BN), (k, tn)), full[s])

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
                wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s], b_major="mn")
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
            dst = tile(C, (64, BN), (tm * 2 + wg, tn))
            tag_assert(tag(out).row == coord(dst)[0] and tag(out).col == coord(dst)[1])
            store(dst, out)


def reference_gemm_nt(A, B):
    """C = A @ B^T in fp32 (the caller rounds and compares)."""
    import numpy as np
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32).T


def reference_gemm_nn(A, B):
    """C = A @ B in fp32."""
    import numpy as np
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32)
