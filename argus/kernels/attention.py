"""The library flash-attention forward, written in the Argus DSL: O = softmax(scale Q K^T) V
per (batch, query head), bf16 or fp16 in, fp32 softmax and accumulation, O in the input
dtype, and the log-sum-exp of every query row (fp32, natural log of the scaled scores: what
a backward pass needs; argus.ops returns it on request).

Grid: one block per 128 query rows (BM) of one head; heads and batches on the other grid
axes. A producer warpgroup loads the block's Q tile once and streams the head's K and V
blocks (BN keys each) through an S-stage ring by TMA; two consumer warpgroups each own 64
query rows and keep the online softmax (row max m, row sum l, accumulator o) in registers.

Layouts (two kernels sharing every helper, like gemm_nt / gemm_nn): TMA tensor maps are
2-D, so the tensors are flattened.
- attention_bhsd: Q, O as (B*HQ*SQ, D), K, V as (B*HK*SK, D); head (b, h) is the segment
  of rows [(b*HQ + h)*SQ, +SQ).
- attention_bshd: Q, O as (B*SQ, HQ*D), K, V as (B*SK, HK*D); batch b is the segment of
  rows [b*SQ, +SQ) and head h the column block h (of D columns).
Segments mask what lies past the head's own sequence: a store drops the rows past SQ (they
belong to the next head, or the next batch), and keys past SK are masked in the scores
(a TMA box reads the tensor's next rows there, or zeros past its end).

GQA / MQA: G query heads share one KV head (G = HQ / HK, a compile-time constant); query
head h reads KV head h // G.

Causal: key k is kept for query q when k <= q + SK - SQ (the diagonal aligned bottom-right,
as FlashAttention does; the kernel takes SK >= SQ, argus.ops handles SQ > SK by the rows
that keep no key); the loop stops at the last block holding a kept key of the block's last
row. Not causal: keys k < SK are kept.

The softmax scale: SCALE_LOG2 = scale * log2(e), a module constant the op specialises (one
build per distinct scale, disk-cached), so exp2 computes the softmax with the scale folded.

Compile-time knobs (module constants, specialised by argus.ops like gemm.py's):
  DT "bf16"|"fp16", HD 64|128, G (query heads per KV head), CAUSAL 0|1,
  BN (keys per block), S (ring stages).

Shape carriers: the sequence lengths SQ and SK are not the dims of any flattened tensor, so
the kernel takes two int32 vectors of SQ and SK entries (QLEN, KLEN) whose only use is their
length (argus.ops passes cached ones). They stand in for runtime int scalars, which the
backend does not take yet.
"""

from argus.lang import (Tensor, add_tag, arrive, assign, assume, block_id, cast, col_of,
                        const, convert_layout, coord, elect_one, exp2, expect_tx,
                        fence_mbarrier_init, fp32, fragment, helper, int32, kernel, log2,
                        maximum, mbarrier, mbarrier_init, minimum, nbytes, role, row_max,
                        row_of, row_sum, segment, select, smem, store, sync_block, tag,
                        tag_assert, tile, tma_load, wait, warpgroup_index, wgmma,
                        wgmma_commit, wgmma_fence, wgmma_wait)

DT = "bf16"
HD = 64                                  # head dim: 64 or 128
G = 1                                    # query heads per KV head (GQA group; 1: MHA)
CAUSAL = 0
SCALE_LOG2 = 1.4426950408889634 / 8.0    # scale * log2(e); the op specialises it
LN2 = 0.6931471805599453
BN = 128                                 # keys per block
S = 2                                    # K/V ring stages


@helper
def ring():
    """Q's barrier and the K/V ring's: kv_full[s] completes when both tiles of stage s have
    landed, kv_empty[s] when both consumer warpgroups have released it."""
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
    return q_full, kv_full, kv_empty


@helper
def key_blocks(bx, SQ, SK):
    """How many key blocks the query block bx visits: every block holding a kept key of its
    last row (causal: up to the diagonal, bottom-right aligned), at most the head's blocks."""
    if CAUSAL:
        nj = minimum((SK + BN - 1) // BN, ((bx + 1) * 128 + SK - SQ + BN - 1) // BN)
    else:
        nj = (SK + BN - 1) // BN
    return nj


@helper
def producer(q_src, k_src, v_src, q_s, k_s, v_s, q_full, kv_full, kv_empty, nj, bx, qc, kc):
    """Warpgroup 0: the Q tile once, then K and V of every visited key block into the ring."""
    with role("producer", warpgroups=(0,), regs=24):
        with elect_one():
            expect_tx(q_full[0], nbytes(q_s[0]))
            tma_load(q_s[0], tile(q_src, (128, HD), (bx, qc)), q_full[0])
        for j in range(nj):
            s = j % S
            wait(kv_empty[s], ((j // S) & 1) ^ 1)
            with elect_one():
                expect_tx(kv_full[s], nbytes(k_s[s]) + nbytes(v_s[s]))
                tma_load(k_s[s], tile(k_src, (BN, HD), (j, kc)), kv_full[s])
                tma_load(v_s[s], tile(v_src, (BN, HD), (j, kc)), kv_full[s])


@helper
def consumer(o_dst, lse_dst, q_s, k_s, v_s, q_full, kv_full, kv_empty, nj, bx, qc, SQ, SK):
    """Warpgroups 1 and 2, 64 query rows each: S = Q K^T of every visited key block, the
    masked online softmax, O += P V; then O / l (and the log-sum-exp) into the head's rows."""
    with role("consumer", warpgroups=(1, 2), regs=240):
        wg = warpgroup_index()
        q_rows = tile(q_s[0], (64, HD), (wg, 0))
        m_i = fragment(fp32, (64,), f"rows(wgmma_acc_m64n{BN})", init=-inf)
        l_i = fragment(fp32, (64,), f"rows(wgmma_acc_m64n{BN})", init=0.0)
        o_acc = fragment(fp32, (64, HD), f"wgmma_acc_m64n{HD}", init=0.0)
        s_acc = fragment(fp32, (64, BN), f"wgmma_acc_m64n{BN}")
        wait(q_full[0], 0)
        for j in range(nj):
            s = j % S
            wait(kv_full[s], (j // S) & 1)
            assign(s_acc, 0.0)
            wgmma_fence()
            wgmma(s_acc, q_rows, k_s[s])
            wgmma_commit()
            wgmma_wait(0)
            # S holds this warpgroup's 64 query rows against the BN keys of block j
            tag_assert(tag(s_acc).row == bx * 128 + wg * 64 + coord(s_acc)[0]
                       and tag(s_acc).col == j * BN + coord(s_acc)[1])
            scores = add_tag(s_acc * SCALE_LOG2, iteration=j)
            if CAUSAL:
                keep = col_of(scores) + j * BN <= row_of(scores) + bx * 128 + wg * 64 + SK - SQ
                # the mask keeps exactly the keys at or before the query's diagonal
                tag_assert(keep == (tag(scores).col <= tag(scores).row + SK - SQ))
            else:
                keep = col_of(scores) + j * BN < SK
                # the mask keeps exactly the head's keys
                tag_assert(keep == (tag(scores).col < SK))
            masked = select(keep, scores, -inf)
            m_new = maximum(m_i, row_max(masked))
            tag_assert(tag(m_new).row == tag(masked).row and tag(m_new).iteration == j)
            p = exp2(masked - m_new)
            alpha = exp2(m_i - m_new)
            assign(l_i, l_i * alpha + row_sum(p))
            assign(o_acc, o_acc * alpha)
            p16 = convert_layout(cast(p, DT), "wgmma_a_rs_16bit")
            wgmma_fence()
            wgmma(o_acc, p16, v_s[s], b_major="mn")
            wgmma_commit()
            wgmma_wait(0)
            with elect_one():
                arrive(kv_empty[s])
            assign(m_i, m_new)
        out = cast(o_acc / l_i, DT)
        dst = tile(o_dst, (64, HD), (bx * 2 + wg, qc))
        tag_assert(tag(out).row == coord(dst)[0] and tag(out).col == coord(dst)[1])
        store(dst, out)
        # the log-sum-exp of every row (natural log of the scaled scores), always stored: it
        # costs 4 bytes a row beside O's 2 HD
        lse = (m_i + log2(l_i)) * LN2
        store(tile(lse_dst, (64,), (bx * 2 + wg,)), lse)


@kernel(grid=("(SQ + 127) // 128", "RQ // SQ"), block=384)
def attention_bhsd(Q: Tensor["RQ", HD, DT], K: Tensor["RK", HD, DT], V: Tensor["RK", HD, DT],
                   O: Tensor["RQ", HD, DT], L: Tensor["RQ", fp32],
                   QLEN: Tensor["SQ", int32], KLEN: Tensor["SK", int32]):
    assume(RQ % SQ == 0)               # B*HQ heads of SQ rows
    assume(RK * G * SQ == RQ * SK)     # B*HK heads of SK rows, HQ = G * HK
    if CAUSAL:
        assume(SK >= SQ)
    bx = block_id("x")
    bh = block_id("y")                 # b * HQ + h
    q_src = segment(Q, bh * SQ, SQ)
    k_src = segment(K, (bh // G) * SK, SK)
    v_src = segment(V, (bh // G) * SK, SK)
    o_dst = segment(O, bh * SQ, SQ)
    lse_dst = segment(L, bh * SQ, SQ)
    nj = key_blocks(bx, SQ, SK)
    q_s = smem(DT, (128, HD), swizzle="128B")
    k_s = smem(DT, (BN, HD), stages=S, swizzle="128B")
    v_s = smem(DT, (BN, HD), stages=S, swizzle="128B")
    q_full, kv_full, kv_empty = ring()
    producer(q_src, k_src, v_src, q_s, k_s, v_s, q_full, kv_full, kv_empty, nj, bx, 0, 0)
    consumer(o_dst, lse_dst, q_s, k_s, v_s, q_full, kv_full, kv_empty, nj, bx, 0, SQ, SK)


@kernel(grid=("(SQ + 127) // 128", "CQ // HD", "RQ // SQ"), block=384)
def attention_bshd(Q: Tensor["RQ", "CQ", DT], K: Tensor["RK", "CK", DT],
                   V: Tensor["RK", "CK", DT], O: Tensor["RQ", "CQ", DT], L: Tensor["RL", fp32],
                   QLEN: Tensor["SQ", int32], KLEN: Tensor["SK", int32]):
    assume(RQ % SQ == 0)               # B batches of SQ rows
    assume(RK * SQ == RQ * SK)         # the same B batches of SK rows
    assume(CQ % HD == 0)               # HQ heads of HD columns
    assume(CQ == G * CK)               # HQ = G * HK
    assume(RL * HD == RQ * CQ)         # B * HQ * SQ log-sum-exp entries
    if CAUSAL:
        assume(SK >= SQ)
    bx = block_id("x")
    h = block_id("y")
    b = block_id("z")
    q_src = segment(Q, b * SQ, SQ)
    k_src = segment(K, b * SK, SK)
    v_src = segment(V, b * SK, SK)
    o_dst = segment(O, b * SQ, SQ)
    lse_dst = segment(L, (b * (CQ // HD) + h) * SQ, SQ)
    nj = key_blocks(bx, SQ, SK)
    q_s = smem(DT, (128, HD), swizzle="128B")
    k_s = smem(DT, (BN, HD), stages=S, swizzle="128B")
    v_s = smem(DT, (BN, HD), stages=S, swizzle="128B")
    q_full, kv_full, kv_empty = ring()
    producer(q_src, k_src, v_src, q_s, k_s, v_s, q_full, kv_full, kv_empty, nj, bx, h, h // G)
    consumer(o_dst, lse_dst, q_s, k_s, v_s, q_full, kv_full, kv_empty, nj, bx, h, SQ, SK)


def reference(q, k, v, causal=False, scale=None):
    """O (and the log-sum-exp per row) in float64 for (B, H, S, D) arrays (K, V with HK
    heads, HQ a multiple of HK); causal aligned bottom-right; rows that keep no key give 0
    and a log-sum-exp of -inf."""
    import numpy as np

    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    g = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    sq, sk = q.shape[2], k.shape[2]
    scale = 1.0 / np.sqrt(q.shape[3]) if scale is None else scale
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    if causal:
        keep = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + sk - sq
        s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m_safe = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m_safe)
    l = p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhqk,bhkd->bhqd", p / np.where(l > 0, l, 1.0), v)
    lse = np.where(l[..., 0] > 0, np.log(np.where(l[..., 0] > 0, l[..., 0], 1.0)) + m_safe[..., 0],
                   -np.inf)
    return o, lse
