"""Bug: the gate-up projection with its token rows gathered by the whole producer warpgroup
(gather_cp_async, argus/kernels/moe_gate_up.py with GATHER = "warpgroup"), but full[s]
initialised to 1 arrival, the count of the TMA form (one elected expect_tx), instead of
1 + 128: every producer thread's cp.async.mbarrier.arrive.noinc is an arrival the count
must include.

Expected: protocol.arrival-count at line 84.
Interpreter: the phases of full[s] complete 129 times per step (every arrival completes a
phase of count 1): the consumers read stages whose rows are still landing, and the wrong
parities follow (races, a wrong H, or a deadlock, depending on the schedule).
"""

import numpy as np

from argus.lang import (Tensor, arrive, assign, assume, bf16, block_id, cast, cdiv, coord,
                        const, elect_one, element, exp2, expect_tx, fence_mbarrier_init,
                        fence_proxy_async, fp32, fragment, gather_cp_async, int32, kernel,
                        load_indices, mbarrier, mbarrier_init, nbytes, prefix_sum, role,
                        round_up, segment, smem, store, sync_block, tag, tag_assert, tile,
                        tma_load, wait, warpgroup_index, wgmma, wgmma_commit, wgmma_fence,
                        wgmma_wait)

E = 8
BLOCKS = 132
LOG2E = 1.4426950408889634


@kernel(grid=(BLOCKS,), block=384)
def moe_gate_up(X: Tensor["T", "K", bf16], W1: Tensor["EF", "K", bf16],
                W3: Tensor["EF", "K", bf16], ids: Tensor["P", int32], counts: Tensor[E, int32],
                H: Tensor["P", "F", bf16],
                BM: const = 128, BN: const = 128, BK: const = 64, S: const = 4):
    assume(K % BK == 0)
    assume(F % BN == 0)
    assume(EF == E * F)
    KT = K // BK
    NT = F // BN
    bid = block_id("x")

    cnt = load_indices(tile(counts, (E,), (0,)))
    offs = prefix_sum(cnt)
    tile_offs = prefix_sum(round_up(cnt, BM))
    assume(element(offs, E - 1) + element(cnt, E - 1) == P)
    assume(ids[coord(ids)[0]] < T)
    for e in range(E):
        assume(tag(segment(ids, element(offs, e), element(cnt, e))).expert == e)
        assume(tag(segment(W1, e * F, F)).expert == e)
        assume(tag(segment(W3, e * F, F)).expert == e)

    x_s = smem(bf16, (BM, BK), stages=S, swizzle="128B")
    g_s = smem(bf16, (BN, BK), stages=S, swizzle="128B")
    u_s = smem(bf16, (BN, BK), stages=S, swizzle="128B")
    full = mbarrier(S)
    empty = mbarrier(S)
    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)          # BUG: 1 + 128 (the gather's arrivals)
            mbarrier_init(empty[s], 2)
    fence_mbarrier_init()
    sync_block()

    with role("producer", warpgroups=(0,), regs=40):
        for e in range(E):
            slots = element(cnt, e)
            ids_e = segment(ids, element(offs, e), slots)
            wg_e = segment(W1, e * F, F)
            wu_e = segment(W3, e * F, F)
            t0 = element(tile_offs, e) // BM
            MT = cdiv(slots, BM)
            for a in range(NT):
                for b in range(MT):
                    w = t0 * NT + a * MT + b
                    if w % BLOCKS == bid:
                        i = w // BLOCKS
                        tokens = load_indices(tile(ids_e, (BM,), (b,)))
                        for k in range(KT):
                            g = i * KT + k
                            s = g % S
                            wait(empty[s], ((g // S) & 1) ^ 1)
                            with elect_one():
                                expect_tx(full[s], nbytes(g_s[s]) + nbytes(u_s[s]))
                                tma_load(g_s[s], tile(wg_e, (BN, BK), (a, k)), full[s])
                                tma_load(u_s[s], tile(wu_e, (BN, BK), (a, k)), full[s])
                            gather_cp_async(x_s[s], X, tokens, k, full[s])

    with role("consumer", warpgroups=(1, 2), regs=232):
        wg = warpgroup_index()
        gate = fragment(fp32, (64, BN), f"wgmma_acc_m64n{BN}", init=0.0)
        up = fragment(fp32, (64, BN), f"wgmma_acc_m64n{BN}", init=0.0)
        for e in range(E):
            slots = element(cnt, e)
            h_e = segment(H, element(offs, e), slots)
            t0 = element(tile_offs, e) // BM
            MT = cdiv(slots, BM)
            for a in range(NT):
                for b in range(MT):
                    w = t0 * NT + a * MT + b
                    if w % BLOCKS == bid:
                        i = w // BLOCKS
                        assign(gate, 0.0)
                        assign(up, 0.0)
                        for k in range(KT):
                            g = i * KT + k
                            s = g % S
                            wait(full[s], (g // S) & 1)
                            fence_proxy_async()
                            x_rows = tile(x_s[s], (64, BK), (wg, 0))
                            wgmma_fence()
                            wgmma(gate, x_rows, g_s[s])
                            wgmma(up, x_rows, u_s[s])
                            wgmma_commit()
                            wgmma_wait(1)
                            if g > 0:
                                with elect_one():
                                    arrive(empty[(g - 1) % S])
                        wgmma_wait(0)
                        act = gate / (exp2(gate * -LOG2E) + 1.0)
                        out = cast(act * up, bf16)
                        dst = tile(h_e, (64, BN), (b * 2 + wg, a))
                        tag_assert(tag(out).row == ids[coord(dst)[0]]
                                   and tag(out).col == e * F + coord(dst)[1])
                        store(dst, out)


def inputs(rng, symbols):
    """A small routing: T tokens, counts adding up to P slots."""
    t, k, f = 40, 64, 128
    counts = np.bincount(rng.integers(0, E, 150), minlength=E).astype(np.int32)
    p = int(counts.sum())
    return {"X": rng.standard_normal((t, k)).astype(np.float32),
            "W1": rng.standard_normal((E * f, k)).astype(np.float32) / 8,
            "W3": rng.standard_normal((E * f, k)).astype(np.float32) / 8,
            "ids": rng.integers(0, t, p).astype(np.int32), "counts": counts,
            "H": np.zeros((p, f), np.float32)}
