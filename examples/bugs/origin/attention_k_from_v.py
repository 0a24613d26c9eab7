"""Bug: K is loaded from V.

The producer fills the K stage from V (the line below, copied): the scores are Q V^T.

A copy of examples/flash_attention.py with this one bug.
Expected: tag.operand-tensor at line 54.
"""

import numpy as np

from argus.lang import (Tensor, add_tag, arrive, assign, assume, bf16, block_id, cast, col_of,
                        const, convert_layout, coord, elect_one, exp2, expect_tx,
                        fence_mbarrier_init, fp32, fragment, kernel, maximum, mbarrier,
                        mbarrier_init, nbytes, role, row_max, row_of, row_sum, select, smem,
                        store, sync_block, tag, tag_assert, tile, tma_load, wait,
                        warpgroup_index, wgmma, wgmma_commit, wgmma_fence, wgmma_wait)

HD = 64                                    # head dim: 64 or 128, nothing else changes
SCALE_LOG2 = 1.4426950408889634 / HD ** 0.5   # log2(e) / sqrt(HD)


@kernel(grid=("T // BM",), block=384)
def flash_fwd(Q: Tensor["T", HD, bf16], K: Tensor["T", HD, bf16], V: Tensor["T", HD, bf16],
              O: Tensor["T", HD, bf16], BM: const = 128, BN: const = 64, S: const = 2,
              CAUSAL: const = 1):
    assume(T % BM == 0)
    bx = block_id("x")
    if CAUSAL:
        NJ = (bx + 1) * (BM // BN)         # key blocks up to and including the diagonal
    else:
        NJ = T // BN
    q_s = smem(bf16, (BM, HD), swizzle="128B")
    k_s = smem(bf16, (BN, HD), stages=S, swizzle="128B")
    v_s = smem(bf16, (BN, HD), stages=S, swizzle="128B")
    q_full = mbarrier(1)
    kv_full = mbarrier(S)
    kv_empty = mbarrier(S)
    with elect_one("block"):
        mbarrier_init(q_full[0], 1)
        for s in range(S):
            mbarrier_init(kv_full[s], 1)
            mbarrier_init(kv_empty[s], 2)
    fence_mbarrier_init()
    sync_block()

    with role("producer", warpgroups=(0,), regs=24):
        with elect_one():
            expect_tx(q_full[0], nbytes(q_s[0]))
            tma_load(q_s[0], tile(Q, (BM, HD), (bx, 0)), q_full[0])
            for j in range(NJ):
                s = j % S
                wait(kv_empty[s], ((j // S) & 1) ^ 1)
                expect_tx(kv_full[s], nbytes(k_s[s]) + nbytes(v_s[s]))
                tma_load(k_s[s], tile(V, (BN, HD), (j, 0)), kv_full[s])
                tma_load(v_s[s], tile(V, (BN, HD), (j, 0)), kv_full[s])

    with role("consumer", warpgroups=(1, 2), regs=240):
        wg = warpgroup_index()
        q_rows = tile(q_s[0], (64, HD), (wg, 0))
        m_i = fragment(fp32, (64,), "rows(wgmma_acc_m64n64)", init=-inf)
        l_i = fragment(fp32, (64,), "rows(wgmma_acc_m64n64)", init=0.0)
        o_acc = fragment(fp32, (64, HD), f"wgmma_acc_m64n{HD}", init=0.0)
        s_acc = fragment(fp32, (64, BN), "wgmma_acc_m64n64")
        wait(q_full[0], 0)
        for j in range(NJ):
            s = j % S
            wait(kv_full[s], (j // S) & 1)
            assign(s_acc, 0.0)
            wgmma_fence()
            wgmma(s_acc, q_rows, k_s[s])
            wgmma_commit()
            wgmma_wait(0)
            # S holds this warpgroup's 64 query rows against the BN keys of block j
            tag_assert(tag(s_acc).row == bx * BM + wg * 64 + coord(s_acc)[0]
                       and tag(s_acc).col == j * BN + coord(s_acc)[1])
            scores = add_tag(s_acc * SCALE_LOG2, iteration=j)
            if CAUSAL:
                keep = col_of(scores) + j * BN <= row_of(scores) + bx * BM + wg * 64
                # the mask keeps exactly the keys at or before the query
                tag_assert(keep == (tag(scores).col <= tag(scores).row))
                masked = select(keep, scores, -inf)
            else:
                masked = scores
            m_new = maximum(m_i, row_max(masked))
            tag_assert(tag(m_new).row == tag(masked).row and tag(m_new).iteration == j)
            p = exp2(masked - m_new)
            alpha = exp2(m_i - m_new)
            assign(l_i, l_i * alpha + row_sum(p))
            assign(o_acc, o_acc * alpha)
            p16 = convert_layout(cast(p, bf16), "wgmma_a_rs_16bit")
            wgmma_fence()
            wgmma(o_acc, p16, v_s[s], b_major="mn")
            wgmma_commit()
            wgmma_wait(0)
            with elect_one():
                arrive(kv_empty[s])
            assign(m_i, m_new)
        out = cast(o_acc / l_i, bf16)
        dst = tile(O, (64, HD), (bx * 2 + wg, 0))
        tag_assert(tag(out).row == coord(dst)[0] and tag(out).col == coord(dst)[1])
        store(dst, out)


def reference(Q, K, V, causal=True):
    q, k, v = (np.asarray(x, np.float64) for x in (Q, K, V))
    s = q @ k.T / np.sqrt(q.shape[1])
    if causal:
        s = np.where(np.tril(np.ones_like(s, dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v
