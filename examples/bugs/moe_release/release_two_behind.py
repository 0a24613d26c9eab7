"""Bug: the library gate-up (argus/kernels/moe_gate_up.py, two blocks, the warpgroup
gather) with the consumer frees the stage of step g - 2 instead of g - 1 at step g (an off-by-one in the pipelined release): the stage of step g - 1 is freed a step late and stage S - 2 gets an arrival before any step filled it, so a phase of empty completes early and the producer overwrites a stage still being read, or waits forever.

Its blocks walk their items through a filter (`if w % BLOCKS == bid`), so the steps are the
kernel's own g; the protocol pass checks that a release in such a walk frees its own step
or the previous one, at every step (or every step but the first). Before 2026-12-07 it did
not, and this kernel verified (the differential fuzz found the class on the library target).

Expected: protocol.stage at line 184.
Interpreter: a deadlock.
"""

from argus.lang import (Tensor, arrive, assign, assume, block_id, cast, cdiv, coord, const,
                        elect_one, element, exp2, expect_tx, fence_mbarrier_init,
                        fence_proxy_async, fp32, fragment, gather_cp_async, gather_tma, helper,
                        int32, kernel, load_indices, mbarrier, mbarrier_init, nbytes,
                        prefix_sum, role, round_up, segment, smem, store, sync_block, tag,
                        tag_assert, tile, tma_load, wait, warpgroup_index, wgmma, wgmma_commit,
                        wgmma_fence, wgmma_wait)

E = 8                             # experts
DT = "bf16"                       # activations and weights: bf16 or fp16
BLOCKS = 2                        # two persistent blocks (small enough to interpret)
ORDER = "n_major"                 # the items of an expert: "n_major" or "m_major"
GATHER = "warpgroup"              # the token rows: "tma" (one thread) or "warpgroup" (all 128)
WG = 2                            # consumer warpgroups, 64 slots of an m-tile each (BM = 64 * WG)
CONSUMERS = (1, 2)                # their warpgroup indices (specialised with WG)
SKIP_EMPTY = 0       # 1: a block skips the item walk of an expert without slots (decode:
                     # most of 64 experts; measured 14% slower on Mixtral prefill, so off there)
LOG2E = 1.4426950408889634


@helper
def item_extents(MT, NT):
    """(OUTER, INNER) of an expert's item walk: n-tiles outside (ORDER = "n_major": the
    m-tiles sharing a weight tile run together) or m-tiles outside."""
    if ORDER == "n_major":
        OUTER = NT
        INNER = MT
    else:
        OUTER = MT
        INNER = NT
    return OUTER, INNER


@helper
def item_tile(a, b):
    """(m-tile, n-tile) of item (a, b) of the walk item_extents orders."""
    if ORDER == "n_major":
        mt = b
        tn = a
    else:
        mt = a
        tn = b
    return mt, tn


@helper
def produce(X, W1, W3, ids, cnt, offs, tile_offs, x_s, g_s, u_s, full, empty, bid, F, KT, NT,
            BM, BN, BK, S):
    """The producer's walk: every item of this block, every k-step: wait until the consumers
    have released the stage, then gather the item's token rows into it and load the expert's
    gate and up tiles. Run by the one elected thread (GATHER "tma") or by every producer
    thread (GATHER "warpgroup": each copies its part of the gather)."""
    for e in range(E):
        slots = element(cnt, e)
        ids_e = segment(ids, element(offs, e), slots)
        wg_e = segment(W1, e * F, F)
        wu_e = segment(W3, e * F, F)
        t0 = element(tile_offs, e) // BM
        MT = cdiv(slots, BM)
        OUTER, INNER = item_extents(MT, NT)
        if SKIP_EMPTY == 0 or MT > 0:    # an expert without slots: no walk
            for a in range(OUTER):
                for b in range(INNER):
                    w = t0 * NT + a * INNER + b
                    if w % BLOCKS == bid:
                        i = w // BLOCKS
                        mt, tn = item_tile(a, b)
                        tokens = load_indices(tile(ids_e, (BM,), (mt,)))
                        for k in range(KT):
                            g = i * KT + k
                            s = g % S
                            wait(empty[s], ((g // S) & 1) ^ 1)
                            if GATHER == "tma":
                                expect_tx(full[s], nbytes(x_s[s]) + nbytes(g_s[s])
                                          + nbytes(u_s[s]))
                                gather_tma(x_s[s], X, tokens, k, full[s])
                                tma_load(g_s[s], tile(wg_e, (BN, BK), (tn, k)), full[s])
                                tma_load(u_s[s], tile(wu_e, (BN, BK), (tn, k)), full[s])
                            else:
                                with elect_one():
                                    expect_tx(full[s], nbytes(g_s[s]) + nbytes(u_s[s]))
                                    tma_load(g_s[s], tile(wg_e, (BN, BK), (tn, k)), full[s])
                                    tma_load(u_s[s], tile(wu_e, (BN, BK), (tn, k)), full[s])
                                gather_cp_async(x_s[s], X, tokens, k, full[s])


@kernel(grid=(BLOCKS,), block=128 * (1 + WG))
def moe_gate_up(X: Tensor["T", "K", DT], W1: Tensor["EF", "K", DT], W3: Tensor["EF", "K", DT],
                ids: Tensor["P", int32], counts: Tensor[E, int32], H: Tensor["P", "F", DT],
                BM: const = 64 * WG, BN: const = 128, BK: const = 64, S: const = 4):
    assume(K % BK == 0)
    assume(F % BN == 0)
    assume(EF == E * F)
    KT = K // BK
    NT = F // BN
    bid = block_id("x")

    # device-side routing, in every warpgroup
    cnt = load_indices(tile(counts, (E,), (0,)))
    offs = prefix_sum(cnt)                         # first slot of each expert
    tile_offs = prefix_sum(round_up(cnt, BM))      # BM * first m-tile of each expert
    # the routing's guarantees (moe_route establishes them, docs/design/verifier-moe.md):
    # the counts add up to the slots, the slot segment e of ids holds the slots routed to e,
    # every slot names a token, and rows e*F .. e*F + F-1 of W1 and W3 are expert e's
    assume(element(offs, E - 1) + element(cnt, E - 1) == P)
    assume(ids[coord(ids)[0]] < T)
    for e in range(E):
        assume(tag(segment(ids, element(offs, e), element(cnt, e))).expert == e)
        assume(tag(segment(W1, e * F, F)).expert == e)
        assume(tag(segment(W3, e * F, F)).expert == e)

    x_s = smem(DT, (BM, BK), stages=S, swizzle="128B")
    g_s = smem(DT, (BN, BK), stages=S, swizzle="128B")
    u_s = smem(DT, (BN, BK), stages=S, swizzle="128B")
    full = mbarrier(S)
    empty = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            if GATHER == "tma":
                mbarrier_init(full[s], 1)          # the producer's expect_tx
            else:
                mbarrier_init(full[s], 1 + 128)    # the expect_tx, and each producer thread's
                                                   # arrival when its cp.async copies land
            mbarrier_init(empty[s], WG)      # every consumer warpgroup releases it
    fence_mbarrier_init()
    sync_block()

    with role("producer", warpgroups=(0,), regs=40):
        if GATHER == "tma":
            with elect_one():        # one thread walks the items, waits and issues
                produce(X, W1, W3, ids, cnt, offs, tile_offs, x_s, g_s, u_s, full, empty, bid,
                        F, KT, NT, BM, BN, BK, S)
        else:
            produce(X, W1, W3, ids, cnt, offs, tile_offs, x_s, g_s, u_s, full, empty, bid, F,
                    KT, NT, BM, BN, BK, S)

    with role("consumer", warpgroups=CONSUMERS, regs=232):
        wg = warpgroup_index()
        gate = fragment(fp32, (64, BN), f"wgmma_acc_m64n{BN}", init=0.0)
        up = fragment(fp32, (64, BN), f"wgmma_acc_m64n{BN}", init=0.0)
        for e in range(E):
            slots = element(cnt, e)
            h_e = segment(H, element(offs, e), slots)
            t0 = element(tile_offs, e) // BM
            MT = cdiv(slots, BM)
            OUTER, INNER = item_extents(MT, NT)
            if SKIP_EMPTY == 0 or MT > 0:    # an expert without slots: no walk
                for a in range(OUTER):
                    for b in range(INNER):
                        w = t0 * NT + a * INNER + b
                        if w % BLOCKS == bid:
                            i = w // BLOCKS
                            mt, tn = item_tile(a, b)
                            assign(gate, 0.0)
                            assign(up, 0.0)
                            for k in range(KT):
                                g = i * KT + k
                                s = g % S
                                wait(full[s], (g // S) & 1)
                                if GATHER == "warpgroup":
                                    fence_proxy_async()    # the rows came by cp.async (generic proxy)
                                x_rows = tile(x_s[s], (64, BK), (wg, 0))
                                wgmma_fence()
                                wgmma(gate, x_rows, g_s[s])
                                wgmma(up, x_rows, u_s[s])
                                wgmma_commit()
                                # keep this step in flight; the one before (of this tile or
                                # of the block's previous one) has retired: free its stage
                                wgmma_wait(1)
                                if g > 0:
                                    with elect_one():
                                        arrive(empty[(g - 2) % S])
                            wgmma_wait(0)
                            act = gate / (exp2(gate * -LOG2E) + 1.0)   # silu(gate), fp32
                            out = cast(act * up, DT)
                            dst = tile(h_e, (64, BN), (mt * WG + wg, tn))
                            tag_assert(tag(out).row == ids[coord(dst)[0]]
                                       and tag(out).col == e * F + coord(dst)[1])
                            store(dst, out)


def reference(X, W1, W3, ids, counts):
    """H[p] = silu(X[ids[p]] W1[e]^T) * (X[ids[p]] W3[e]^T) in float64 for the slots p of
    expert e (W1, W3 flattened (E*F, K))."""
    import numpy as np

    X = np.asarray(X, np.float64)
    ids = np.asarray(ids, np.int64)
    counts = np.asarray(counts, np.int64)
    w = np.stack([np.asarray(W, np.float64).reshape(len(counts), -1, X.shape[1])
                  for W in (W1, W3)], axis=1)
    H = np.empty((len(ids), w.shape[2]))
    offs = np.concatenate([[0], np.cumsum(counts)])
    for e in range(len(counts)):
        rows = X[ids[offs[e]:offs[e + 1]]]
        g, u = rows @ w[e, 0].T, rows @ w[e, 1].T
        H[offs[e]:offs[e + 1]] = g / (1.0 + np.exp(-g)) * u
    return H


def inputs(rng, symbols):
    """A routing for `argus run` and the fuzzer: P slots spread over the E experts (about a
    quarter empty, counts not multiples of the tile), each slot naming a random token."""
    import numpy as np

    weights = rng.random(E) * (rng.random(E) < 0.75)
    if not weights.any():
        weights[0] = 1.0
    counts = rng.multinomial(symbols["P"], weights / weights.sum())
    ids = rng.integers(0, symbols["T"], symbols["P"])
    return {"counts": counts.astype(np.int32), "ids": ids.astype(np.int32)}
