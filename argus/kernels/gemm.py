"""The library GEMM, written in the Argus DSL: C = A @ B^T (gemm_nt, B is N x K, `x @ W.T`)
and C = A @ B (gemm_nn, B is K x N, `x @ W`), bf16 or fp16 in, fp32 accumulate.

One producer warpgroup streams A and B tiles by TMA into an S-stage ring (full/empty
mbarriers); two consumer warpgroups each own 64 rows of the BM x BN tile (BM = 128) and
accumulate with wgmma, keeping one k-step's wgmma in flight while the next is issued (a
stage is released once the wgmma reading it has retired); the tiles are walked
persistently in grouped order. Tails in M, N and K need no special code: TMA fills
out-of-bounds elements with zeros (so the last K step adds nothing wrong) and the stores
drop what falls outside C. K and N must be multiples of 8 (16-byte TMA row strides; argus.ops
pads other sizes); A and B, read only by TMA, may be row-strided views (the tensor maps carry
the pitch, which the driver checks is a multiple of 16 bytes).

Two compile-time choices (module constants, specialised by argus.ops like DT and BLOCKS):
- CM, blocks per cluster along M. With CM = 2 the two blocks of a cluster work on the
  tiles (2 cm, tn) and (2 cm + 1, tn), which share their B tile: each block loads half of
  it (a band of rows of the shared-memory stage) and multicasts it into both, so B crosses
  L2 once per cluster. A stage of either block is then written by both producers, so its
  empty barrier counts the consumers of both blocks (remote arrives), and the blocks sync
  as a cluster before their first arrive and before they exit. The schedule walks cluster
  tiles (`by="cluster"`): both blocks of a cluster visit the same steps.
- EPILOGUE: "direct" stores each consumer's 64 x BN half straight from registers;
  "smem_tma" writes it into a swizzled shared-memory tile that one thread stores with TMA,
  so the global write runs under the next tile's mainloop (the tile is reused only after
  the previous store has read it); "tma_chunks" does the same through two 64-column
  buffers in turn (32 KB instead of the tile's 64 KB at BN = 256, which leaves room for a
  fourth stage of the ring), each written once the store before the newest has read it.

The two kernels share everything but B's layout through @helper functions, inlined where
they are called: the ring's barriers (ring_barriers, start_together), the epilogue's buffers
(epilogue_buffers), the producer warpgroup (producer: it loads B's tile as the layout says),
the consumer warpgroups (consumer: the wgmma reads B's stage as the layout says, then the
epilogue) and the block epilogue (store_in_blocks).
"""

from argus.lang import (Tensor, arrive, assign, assume, cast, cluster_rank, cluster_sync, const,
                        coord, elect_one, expect_tx, fence_mbarrier_init, fence_proxy_async,
                        fp32, fragment, helper, kernel, mbarrier, mbarrier_init, named_barrier,
                        nbytes, role, schedule, smem, store, sync_block, tag, tag_assert, tile,
                        tma_load, tma_store, tma_store_commit, tma_store_wait, wait,
                        warpgroup_index, wgmma, wgmma_commit, wgmma_fence, wgmma_wait)

DT = "bf16"
BLOCKS = 132     # one persistent block per SM of an H200
ACC = "wgmma_acc_m64n256"   # the accumulator layout of BN (specialised with BN)
CM = 1           # blocks per cluster along M (2: B tiles multicast to both)
WG = 2           # consumer warpgroups, 64 rows of the tile each (BM = 64 * WG)
CONSUMERS = (1, 2)          # their warpgroup indices (specialised with WG)
EPILOGUE = "direct"         # or "smem_tma", "tma_chunks"


@helper
def ring_barriers(S):
    """The ring's barriers, initialised by one thread: full[s] completes when both tiles of
    stage s have landed (the producer's expect_tx, then TMA), empty[s] when every consumer
    warpgroup that reads it (of every block it feeds, in a cluster) has released it."""
    full = mbarrier(S)
    empty = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
            mbarrier_init(empty[s], WG * CM)    # the consumers of every block it feeds
    fence_mbarrier_init()
    return full, empty


@helper
def start_together():
    """No block waits on a barrier before every block (of its cluster) has initialised its
    own; the block's rank in its cluster (0 without one)."""
    if CM > 1:
        rank = cluster_rank()
        cluster_sync()
    else:
        rank = 0
        sync_block()
    return rank


@helper
def producer(A, B, a_s, b_s, full, empty, rank, M, N, KT, BM, BN, BK, S, GROUP, b_major):
    """Warpgroup 0: for every tile of the (cluster) walk and k-step, wait until the consumers
    have released the step's stage, then load A's and B's tiles into it by TMA."""
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
                    # B's tile: N x K (b_major "k", gemm_nt) or K x N ("mn", gemm_nn); in a
                    # cluster, this block's band of the shared tile, into every block's stage
                    if CM == 1 and b_major == "k":
                        tma_load(b_s[s], tile(B, (BN, BK), (tn, k)), full[s])
                    elif CM == 1:
                        tma_load(b_s[s], tile(B, (BK, BN), (k, tn)), full[s])
                    elif b_major == "k":
                        tma_load(tile(b_s[s], (BN // CM, BK), (rank, 0)), tile(B, (BN // CM, BK), (tn * CM + rank, k)), full[s],
                                 multicast=(1 << CM) - 1)
                    else:
                        tma_load(tile(b_s[s], (BK // CM, BN), (rank, 0)), tile(B, (BK // CM, BN), (k * CM + rank, tn)), full[s],
                                 multicast=(1 << CM) - 1)


@helper
def store_in_blocks(C, c0, c1, out, tm, tn, wg, BM, BN):
    """EPILOGUE="tma_chunks": the consumers' BM x BN tile `out` into C in 64-column blocks,
    through the two 64-column buffers in turn (each TMA-stored by one thread)."""
    for h in range(BN // 128):
        # column block 2h through c0, 2h + 1 through c1: each buffer is written
        # once the store before the newest (the last one from it) has read it
        if wg == 0:
            with elect_one():
                tma_store_wait(1)
        named_barrier(1, 128 * WG)
        store(tile(c0[0], (64, 64), (wg, 0)), tile(out, (64, 64), (0, 2 * h)))
        fence_proxy_async()
        named_barrier(1, 128 * WG)
        if wg == 0:
            with elect_one():
                tma_store(tile(C, (BM, 64), (tm, tn * (BN // 64) + 2 * h)), c0[0])
                tma_store_commit()
                tma_store_wait(1)
        named_barrier(1, 128 * WG)
        store(tile(c1[0], (64, 64), (wg, 0)), tile(out, (64, 64), (0, 2 * h + 1)))
        fence_proxy_async()
        named_barrier(1, 128 * WG)
        if wg == 0:
            with elect_one():
                tma_store(tile(C, (BM, 64), (tm, tn * (BN // 64) + 2 * h + 1)),
                          c1[0])
                tma_store_commit()


@helper
def epilogue_buffers(BM, BN):
    """The shared memory the epilogue stores through: nothing ("direct"), the BM x BN tile
    c_s ("smem_tma"), or two 64-column blocks of it, c0 and c1 ("tma_chunks")."""
    if EPILOGUE == "smem_tma":
        c_s = smem(DT, (BM, BN), swizzle="128B")     # the epilogue tile, stored by TMA
        bufs = (c_s,)
    elif EPILOGUE == "tma_chunks":
        # two 64-column blocks of the epilogue tile, stored by TMA in turn
        c0 = smem(DT, (BM, 64), swizzle="128B")
        c1 = smem(DT, (BM, 64), swizzle="128B")
        bufs = (c0, c1)
    else:
        bufs = ()
    return bufs


@helper
def consumer(C, a_s, b_s, c, full, empty, rank, M, N, KT, BM, BN, BK, S, GROUP, b_major):
    """The consumer warpgroups, 64 rows of the BM x BN tile each: for every tile of the walk,
    accumulate its k-steps with wgmma (one in flight), releasing each stage once the wgmma
    reading it has retired; then store the tile by the EPILOGUE, through the buffers `c`."""
    if EPILOGUE == "smem_tma":
        c_s = c[0]
    elif EPILOGUE == "tma_chunks":
        c0, c1 = c
    with role("consumer", warpgroups=CONSUMERS, regs=232):
        wg = warpgroup_index()
        acc = fragment(fp32, (64, BN), ACC, init=0.0)
        for i, cm, tn in schedule((M + BM * CM - 1) // (BM * CM), (N + BN - 1) // BN,
                                  order="grouped", group=GROUP, by="cluster"):
            tm = cm * CM + rank
            assign(acc, 0.0)
            for k in range(KT):
                g = i * KT + k
                s = g % S
                wait(full[s], (g // S) & 1)
                wgmma_fence()
                if b_major == "k":      # B's tile N x K (gemm_nt)
                    wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s])
                else:                   # K x N (gemm_nn)
                    wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s], b_major="mn")
                wgmma_commit()
                # keep this step's wgmma in flight; the previous one is done: free its stage
                wgmma_wait(1)
                if k > 0:
                    with elect_one():
                        if CM > 1:
                            for r in range(CM):
                                arrive(empty[(g - 1) % S], cta=r)
                        else:
                            arrive(empty[(g - 1) % S])
            wgmma_wait(0)
            with elect_one():
                if CM > 1:
                    for r in range(CM):
                        arrive(empty[(i * KT + KT - 1) % S], cta=r)
                else:
                    arrive(empty[(i * KT + KT - 1) % S])
            out = cast(acc, DT)
            dst = tile(C, (64, BN), (tm * WG + wg, tn))
            tag_assert(tag(out).row == coord(dst)[0] and tag(out).col == coord(dst)[1])
            if EPILOGUE == "smem_tma":
                # the previous tile's TMA store must have read c_s before it is overwritten
                if wg == 0:
                    with elect_one():
                        tma_store_wait(0)
                named_barrier(1, 128 * WG)
                store(tile(c_s[0], (64, BN), (wg, 0)), out)
                fence_proxy_async()
                named_barrier(1, 128 * WG)
                if wg == 0:
                    with elect_one():
                        tma_store(tile(C, (BM, BN), (tm, tn)), c_s[0])
                        tma_store_commit()
            elif EPILOGUE == "tma_chunks":
                store_in_blocks(C, c0, c1, out, tm, tn, wg, BM, BN)
            else:
                store(dst, out)
        if EPILOGUE != "direct":
            if wg == 0:
                with elect_one():
                    tma_store_wait(0)


@kernel(grid=(BLOCKS,), block=128 * (1 + WG), cluster=(CM, 1, 1))
def gemm_nt(A: Tensor["M", "K", DT], B: Tensor["N", "K", DT], C: Tensor["M", "N", DT],
            BM: const = 64 * WG, BN: const = 256, BK: const = 64, S: const = 4, GROUP: const = 8):
    assume(K % 8 == 0)     # 16-byte TMA row strides of A and B (and C's rows)
    assume(N % 8 == 0)
    assume(N <= 2147483392)   # 2^31 - 256: the last BN-wide tile's columns fit int32 (BN = 192)
    KT = (K + BK - 1) // BK
    a_s = smem(DT, (BM, BK), stages=S, swizzle="128B")
    b_s = smem(DT, (BN, BK), stages=S, swizzle="128B")
    c = epilogue_buffers(BM, BN)
    full, empty = ring_barriers(S)
    rank = start_together()

    producer(A, B, a_s, b_s, full, empty, rank, M, N, KT, BM, BN, BK, S, GROUP, b_major="k")

    consumer(C, a_s, b_s, c, full, empty, rank, M, N, KT, BM, BN, BK, S, GROUP, b_major="k")
    if CM > 1:
        cluster_sync()     # no block leaves while its peer may still write or arrive into it


@kernel(grid=(BLOCKS,), block=128 * (1 + WG), cluster=(CM, 1, 1))
def gemm_nn(A: Tensor["M", "K", DT], B: Tensor["K", "N", DT], C: Tensor["M", "N", DT],
            BM: const = 64 * WG, BN: const = 256, BK: const = 64, S: const = 4, GROUP: const = 8):
    assume(K % 8 == 0)     # 16-byte TMA row strides of A and B (and C's rows)
    assume(N % 8 == 0)
    assume(N <= 2147483392)   # 2^31 - 256: the last BN-wide tile's columns fit int32 (BN = 192)
    KT = (K + BK - 1) // BK
    a_s = smem(DT, (BM, BK), stages=S, swizzle="128B")
    b_s = smem(DT, (BK, BN), stages=S, swizzle="widest")    # 128B rows, or 64B/32B if narrow
    c = epilogue_buffers(BM, BN)
    full, empty = ring_barriers(S)
    rank = start_together()

    producer(A, B, a_s, b_s, full, empty, rank, M, N, KT, BM, BN, BK, S, GROUP, b_major="mn")

    consumer(C, a_s, b_s, c, full, empty, rank, M, N, KT, BM, BN, BK, S, GROUP, b_major="mn")
    if CM > 1:
        cluster_sync()     # no block leaves while its peer may still write or arrive into it


def reference_gemm_nt(A, B):
    """C = A @ B^T in fp32 (the caller rounds and compares)."""
    import numpy as np
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32).T


def reference_gemm_nn(A, B):
    """C = A @ B in fp32."""
    import numpy as np
    return np.asarray(A, np.float32) @ np.asarray(B, np.float32)
