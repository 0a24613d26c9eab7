"""The down projection of the MoE layer (argus.ops.moe), a grouped GEMM in the style of
torch._grouped_mm with the routing weight applied in its epilogue: for every expert e,
Y[slots of e] = wsorted[slots of e] * (X[slots of e] @ W[e]^T).

X is the gate-up output H in slot order (argus/kernels/moe_gate_up.py), sorted by expert with
`counts[e]` slots for expert e (argus/kernels/moe_route.py), so each expert's rows are one
segment, loaded by TMA (tail rows of a segment's last tile hold the next expert's rows and
feed only accumulator rows that are never stored). W is the (E, N, K) down weights flattened
to (E*N, K). `wsorted[p]` is the routing weight of slot p; each consumer multiplies its 64
accumulator rows by their weights (a row vector in the accumulator's layout) before rounding.
Y, in slot order, goes to the combine (argus/kernels/moe_combine.py).

The structure is argus/kernels/gemm.py's: one producer warpgroup streams X and W tiles into an
S-stage ring, WG consumer warpgroups (two, or one for decode) own 64 rows each and keep one
k-step's wgmma in flight; blocks are persistent over the work items of every expert (an
expert without slots has none: its weights are never read), numbered n-tile major within an
expert (ORDER = "n_major") or m-tile major ("m_major"). Module constants E, DT, BLOCKS, ORDER,
WG, CONSUMERS; kernel constants BM (64 * WG), BN (<= 256), BK, S.
"""

from argus.lang import (Tensor, arrive, assign, assume, block_id, cast, cdiv, coord, const,
                        elect_one, element, expect_tx, fence_mbarrier_init, fp32, fragment, helper,
                        int32, kernel, load, load_indices, mbarrier, mbarrier_init, nbytes,
                        prefix_sum, role, round_up, segment, smem, store, sync_block, tag,
                        tag_assert, tile, tma_load, wait, warpgroup_index, wgmma, wgmma_commit,
                        wgmma_fence, wgmma_wait)

E = 8                # experts
DT = "bf16"          # bf16 or fp16
BLOCKS = 132         # one persistent block per SM of an H200
ORDER = "n_major"    # the items of an expert: "n_major" or "m_major"
WG = 2               # consumer warpgroups, 64 rows of an m-tile each (BM = 64 * WG)
CONSUMERS = (1, 2)   # their warpgroup indices (specialised with WG)
SKIP_EMPTY = 0       # 1: a block skips the item walk of an expert without slots (decode:
                     # most of 64 experts; measured 14% slower on Mixtral prefill, so off there)


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


@kernel(grid=(BLOCKS,), block=128 * (1 + WG))
def moe_down(X: Tensor["T", "K", DT], W: Tensor["EN", "K", DT], counts: Tensor[E, int32],
             wsorted: Tensor["T", fp32], Y: Tensor["T", "N", DT],
             BM: const = 64 * WG, BN: const = 128, BK: const = 64, S: const = 4):
    assume(K % BK == 0)
    assume(N % BN == 0)
    assume(EN == E * N)
    KT = K // BK
    NT = N // BN
    bid = block_id("x")

    # device-side routing, in every warpgroup
    cnt = load_indices(tile(counts, (E,), (0,)))
    offs = prefix_sum(cnt)                         # first row of each expert
    tile_offs = prefix_sum(round_up(cnt, BM))      # BM * first m-tile of each expert
    # the routing's guarantees (moe_route establishes them; taken as given here, see
    # docs/design/verifier-moe.md): the counts add up to the rows, the rows are sorted by
    # expert (segment e holds the rows routed to e), and W[e] = rows e*N .. e*N + N-1 of W
    assume(element(offs, E - 1) + element(cnt, E - 1) == T)
    for e in range(E):
        assume(tag(segment(X, element(offs, e), element(cnt, e))).expert == e)
        assume(tag(segment(W, e * N, N)).expert == e)

    x_s = smem(DT, (BM, BK), stages=S, swizzle="128B")
    w_s = smem(DT, (BN, BK), stages=S, swizzle="128B")
    full = mbarrier(S)
    empty = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
            mbarrier_init(empty[s], WG)      # every consumer warpgroup releases it
    fence_mbarrier_init()
    sync_block()

    with role("producer", warpgroups=(0,), regs=40):
        with elect_one():
            for e in range(E):
                rows = element(cnt, e)
                x_e = segment(X, element(offs, e), rows)
                w_e = segment(W, e * N, N)
                t0 = element(tile_offs, e) // BM
                MT = cdiv(rows, BM)
                OUTER, INNER = item_extents(MT, NT)
                if SKIP_EMPTY == 0 or MT > 0:    # an expert without slots: no walk
                    for a in range(OUTER):
                        for b in range(INNER):
                            w = t0 * NT + a * INNER + b
                            if w % BLOCKS == bid:
                                i = w // BLOCKS
                                mt, tn = item_tile(a, b)
                                for k in range(KT):
                                    g = i * KT + k
                                    s = g % S
                                    wait(empty[s], ((g // S) & 1) ^ 1)
                                    expect_tx(full[s], nbytes(x_s[s]) + nbytes(w_s[s]))
                                    tma_load(x_s[s], tile(x_e, (BM, BK), (mt, k)), full[s])
                                    tma_load(w_s[s], tile(w_e, (BN, BK), (tn, k)), full[s])

    with role("consumer", warpgroups=CONSUMERS, regs=232):
        wg = warpgroup_index()
        acc = fragment(fp32, (64, BN), f"wgmma_acc_m64n{BN}", init=0.0)
        for e in range(E):
            rows = element(cnt, e)
            y_e = segment(Y, element(offs, e), rows)
            w_e = segment(wsorted, element(offs, e), rows)
            t0 = element(tile_offs, e) // BM
            MT = cdiv(rows, BM)
            OUTER, INNER = item_extents(MT, NT)
            if SKIP_EMPTY == 0 or MT > 0:    # an expert without slots: no walk
                for a in range(OUTER):
                    for b in range(INNER):
                        w = t0 * NT + a * INNER + b
                        if w % BLOCKS == bid:
                            i = w // BLOCKS
                            mt, tn = item_tile(a, b)
                            assign(acc, 0.0)
                            for k in range(KT):
                                g = i * KT + k
                                s = g % S
                                wait(full[s], (g // S) & 1)
                                wgmma_fence()
                                wgmma(acc, tile(x_s[s], (64, BK), (wg, 0)), w_s[s])
                                wgmma_commit()
                                # keep this step in flight; the one before (of this tile or
                                # of the block's previous one) has retired: free its stage
                                wgmma_wait(1)
                                if g > 0:
                                    with elect_one():
                                        arrive(empty[(g - 1) % S])
                            wgmma_wait(0)
                            # the routing weight of each row's slot, in the epilogue
                            gate = load(tile(w_e, (64,), (mt * WG + wg,)), f"rows(wgmma_acc_m64n{BN})")
                            out = cast(acc * gate, DT)
                            dst = tile(y_e, (64, BN), (mt * WG + wg, tn))
                            tag_assert(tag(out).row == coord(dst)[0]
                                       and tag(out).col == e * N + coord(dst)[1])
                            store(dst, out)


def reference(X, W, counts, wsorted):
    """Y[rows of e] = wsorted[rows of e] * (X[rows of e] @ W[e]^T) in float64."""
    import numpy as np

    X = np.asarray(X, np.float64)
    counts = np.asarray(counts, np.int64)
    weights = np.asarray(W, np.float64).reshape(len(counts), -1, X.shape[1])
    Y = np.empty((X.shape[0], weights.shape[1]))
    offs = np.concatenate([[0], np.cumsum(counts)])
    w = np.asarray(wsorted, np.float64)
    for e in range(len(counts)):
        lo, hi = offs[e], offs[e + 1]
        Y[lo:hi] = w[lo:hi, None] * (X[lo:hi] @ weights[e].T)
    return Y


def inputs(rng, symbols):
    """A routing for `argus run` and the fuzzer: the T sorted rows spread over the E
    experts (about a quarter empty, counts not multiples of the tile), and each row's
    routing weight."""
    import numpy as np

    weights = rng.random(E) * (rng.random(E) < 0.75)
    if not weights.any():
        weights[0] = 1.0
    counts = rng.multinomial(symbols["T"], weights / weights.sum())
    return {"counts": counts.astype(np.int32),
            "wsorted": rng.random(symbols["T"]).astype(np.float32)}
