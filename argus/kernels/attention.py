"""The library flash-attention forward, written in the Argus DSL: O = softmax(scale Q K^T) V
per (batch, query head), bf16 or fp16 in, fp32 softmax and accumulation, O in the input
dtype, and the log-sum-exp of every query row (fp32, natural log of the scaled scores: what
a backward pass needs; argus.ops returns it on request).

Grid: one block per BM = 64 * WGS query rows of one head; heads and batches on the other
grid axes. A producer warpgroup loads the block's Q tile once and streams the head's K and
V blocks (BN keys each) through an S-stage ring by TMA; WGS consumer warpgroups (two by
default) each own 64 query rows and keep the online softmax (row max m, row sum l,
accumulator o) in registers. BLOCKS_PER_SM = 2 asks for two resident blocks an SM.
PERSIST = 1 launches a persistent grid instead (BLOCKS * BLOCKS_PER_SM blocks): each role
walks the (batch, head, query block) tiles with `schedule`, the K/V ring's positions and Q's
barriers carried from tile to tile (not causal: see PERSIST).

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
  BN (keys per block), S (ring stages), and the FA3 techniques SPLIT_KV, MASK, OVERLAP,
  LPT, FOLD_SCALE, PINGPONG, DEFER, WGS, PERSIST, BLOCKS_PER_SM (each described where it
  is defined).

Sizes: the sequence lengths SQ and SK are not the dims of any flattened tensor, so the
kernel takes them as size parameters (`SQ: Dim, SK: Dim`), ints after the tensors.
"""

from argus.lang import (Dim, Tensor, add_tag, arrive, assign, assume, block_id, cast, col_of,
                        const, convert_layout, coord, elect_one, exp2, expect_tx,
                        fence_mbarrier_init, fp32, fragment, heads, helper, kernel, log2,
                        maximum, mbarrier, mbarrier_init, minimum, named_barrier, nbytes, role,
                        row_max,
                        row_of, row_sum, schedule, segment, select, smem, store, sync_block,
                        tag,
                        tag_assert, tile, tma_load, wait, walked, warpgroup_index, wgmma,
                        wgmma_commit, wgmma_fence, wgmma_wait)

DT = "bf16"
HD = 64                                  # head dim: 64 or 128
WGS = 2                                  # consumer warpgroups, 64 query rows each: a block
                                         # takes BM = 64 * WGS query rows
CONSUMERS = (1, 2)                       # their warpgroup indices (specialised with WGS)
CONSUMER_REGS = 240                      # their setmaxnreg (3 consumers: 160; derived by
                                         # argus.ops.attention_configs.roles)
PRODUCER_REGS = 24                       # the producer's setmaxnreg (TMA issue only)
PERSIST = 0        # 1: a persistent grid (BLOCKS * BLOCKS_PER_SM blocks) walks the (batch,
                   # head, query block) tiles; the producer loads a tile's Q once the last
                   # S = Q K^T of the block's previous tile has retired (q_empty) and its K
                   # and V under that tile's epilogue. Not causal: the ring's position is
                   # i * nj + j, every tile visiting the same nj key blocks
BLOCKS = 132       # the persistent grid's blocks an SM-worth (an H100's or H200's SMs)
BLOCKS_PER_SM = 1  # 2: two blocks share an SM (each half its registers and shared memory),
                   # so one block's prologue and epilogue run under the other's key loop
                   # (with WGS = 1: 64 query rows a block)
G = 1                                    # query heads per KV head (GQA group; 1: MHA)
CAUSAL = 0
SCALE_LOG2 = 1.4426950408889634 / 8.0    # scale * log2(e); the op specialises it
LN2 = 0.6931471805599453
BN = 128                                 # keys per block
S = 3                                    # K/V ring stages (DEFER holds a stage one step longer)
SPLIT_KV = 1       # K and V of a stage on their own barriers: S = Q K^T starts before V lands
MASK = "edge"      # only the diagonal and tail blocks are masked (two key loops); "all":
                   # every block (one loop, the example's structure)
FOLD_SCALE = 1     # 1: row max on the raw scores, exp2(s * c - m * c) one FMA an element
OVERLAP = 0        # 1: S of block j + 1 is issued before the softmax of block j
LPT = 0            # 1: the blocks launch in reverse (block_order="reversed"): each head's
                   # query blocks from the last down (causal: the longest tiles first, the
                   # shortest end the grid), the heads still one after another, so the blocks
                   # running at once share K and V in L2 (LPT by heads on grid x lost 0-9%:
                   # every resident block read another head's K and V)
HEAD_GROUP = 1     # g > 1 (bhsd): grid x holds the g heads of a group, y the query block, z
                   # the group; so with LPT the longest query block of g heads starts first,
                   # then the next longest of the same g heads: a list schedule close to
                   # longest-first over the whole grid (the tail) with the K and V of g heads
                   # in L2 at a time. The head count a multiple of g. bhsd only: bshd keeps
                   # the batch on grid z, and the stores' coverage proof does not solve a
                   # block id divided by a group count (attention_bshd ignores it; the op
                   # sets it for bhsd alone)
PINGPONG = 0       # 1: the two consumer warpgroups take turns at the tensor cores: warpgroup
                   # 0 issues a block's S = Q K^T only after warpgroup 1 has issued its own,
                   # so one warpgroup's softmax runs under the other's GEMMs
TURN = 1           # the named barrier of those turns (the compiler keeps 12..15)
DEFER = 1          # 1: P V of block j is waited for with S of block j + 1 (one wait a block:
                   # the two GEMMs queue back to back), its stage released after that wait
                   # (block_step's key loops; OVERLAP's loop keeps its own order)
                   # (H100, 2026-12-06: with 3 stages 0.82 -> 0.90 of cuDNN over issue 16's
                   # shapes; with 2 the producer starves, 0.71-0.78)
EXP2_POLY = 0      # n >= 1: one P register in n is exp2'd on the FP32 units (a polynomial)
                   # instead of MUFU.EX2, whose 16 results a clock an SM are the bound of
                   # the softmax at d = 64 (a block's 128 x 128 exponentials take as long as
                   # its two 128 x 128 x 64 GEMMs)


@helper
def ring():
    """Q's barriers and the K/V ring's: k_full[s] (v_full[s]) completes when stage s's K (V)
    tile has landed (one barrier for both without SPLIT_KV), kv_empty[s] when every consumer
    warpgroup has released the stage; q_empty (PERSIST) when every consumer warpgroup's last
    S = Q K^T of a tile has retired (Q's tile may be refilled)."""
    q_full = mbarrier(1)
    if PERSIST:
        q_empty = mbarrier(1)
    else:
        q_empty = q_full      # not used: one tile a block
    k_full = mbarrier(S)
    kv_empty = mbarrier(S)
    if SPLIT_KV:
        v_full = mbarrier(S)
    else:
        v_full = k_full
    with elect_one("block"):
        mbarrier_init(q_full[0], 1)
        if PERSIST:
            mbarrier_init(q_empty[0], WGS)
        for s in range(S):
            mbarrier_init(k_full[s], 1)
            if SPLIT_KV:
                mbarrier_init(v_full[s], 1)
            mbarrier_init(kv_empty[s], WGS)
    fence_mbarrier_init()
    sync_block()
    return q_full, q_empty, k_full, v_full, kv_empty


@helper
def key_blocks(bx, SQ, SK):
    """How many key blocks the query block bx visits: every block holding a kept key of its
    last row (causal: up to the diagonal, bottom-right aligned), at most the head's blocks."""
    if CAUSAL:
        nj = minimum((SK + BN - 1) // BN, ((bx + 1) * (64 * WGS) + SK - SQ + BN - 1) // BN)
    else:
        nj = (SK + BN - 1) // BN
    return nj


@helper
def unmasked_blocks(bx, nj, SQ, SK):
    """MASK="edge": how many leading key blocks keep every key for every row of the query
    block (no mask needed): whole blocks of the head's keys, below the diagonal of the
    block's first row when causal."""
    if CAUSAL:
        nf = minimum(SK // BN, (bx * (64 * WGS) + SK - SQ + 1) // BN)
    else:
        nf = SK // BN
    return minimum(nf, nj)


@helper
def walk_extents(NB, HQN, SQ):
    """The persistent grid's tile grid (PERSIST): batches, heads, query blocks, the query
    block fastest; causal: the query block slowest, so that the blocks running at once visit
    tiles of one length (the static walk gives block b the tiles b, b + blocks, ...: with
    the query block fastest, each block would visit the same few residues of it, some
    blocks only long tiles; docs/perf-log.md, twenty-third session)."""
    nq = (SQ + 64 * WGS - 1) // (64 * WGS)
    if CAUSAL:
        e0, e1, e2 = nq, NB, HQN
    else:
        e0, e1, e2 = NB, HQN, nq
    return e0, e1, e2


@helper
def walk_tile(c0, c1, c2):
    """(b, h, bx) of the persistent walk's tile (c0, c1, c2) (walk_extents' grid)."""
    if CAUSAL:
        b, h, bx = c1, c2, c0
    else:
        b, h, bx = c0, c1, c2
    return b, h, bx


@helper
def tile_start(nj, i):
    """The K/V ring's position of the block's i-th tile's first key block (PERSIST): the
    key blocks of its earlier tiles, i * nj when every tile visits the same nj (not
    causal), else their running sum walked(nj) (causal: nj grows with the query block)."""
    if PERSIST and CAUSAL:
        g0 = walked(nj)
    else:
        g0 = i * nj
    return g0


@helper
def ring_pos(g0, j):
    """Where key block j of a tile sits in the K/V ring's sequence: the tile's first position
    g0 plus j (PERSIST), else j (one tile a block, g0 = 0)."""
    if PERSIST:
        g = g0 + j
    else:
        g = j
    return g


@helper
def head_views(Q, K, V, O, L, b, h, SQ, SK, HQN, layout):
    """The views of head (b, h): Q's and K's and V's rows (and column blocks, bshd), O's and
    L's, the columns qc and kc of its query and KV head, and the first rows of its queries,
    keys and log-sum-exps in Q, K and L (tags name rows of the whole tensors). bhsd: h is
    b * HQ + h (b = 0), one segment of rows a head; bshd: batch b is a segment of rows,
    head h a block of HD columns."""
    if layout == "bshd":
        q_src = segment(Q, b * SQ, SQ)
        k_src = segment(K, b * SK, SK)
        v_src = segment(V, b * SK, SK)
        o_dst = segment(O, b * SQ, SQ)
        l0 = (b * HQN + h) * SQ
        qc = h
        kc = h // G
        q0 = b * SQ
        k0 = b * SK
    else:
        q_src = segment(Q, h * SQ, SQ)
        k_src = segment(K, (h // G) * SK, SK)
        v_src = segment(V, (h // G) * SK, SK)
        o_dst = segment(O, h * SQ, SQ)
        l0 = h * SQ
        qc = 0
        kc = 0
        q0 = h * SQ
        k0 = (h // G) * SK
    lse_dst = segment(L, l0, SQ)
    return q_src, k_src, v_src, o_dst, lse_dst, qc, kc, q0, k0, l0


@helper
def grid_tile(SQ, layout):
    """(b, h, bx) of the block's one tile (PERSIST = 0): the query block on grid x (of
    HEAD_GROUP heads, interleaved) and the head (group) on y, the batch on z (bshd). (LPT
    launches the grid in reverse: the ids are the same, the last query block of the last
    head group starts first.)"""
    if HEAD_GROUP > 1 and layout == "bhsd":   # the head's place in its group on x, the
        bx = block_id("y")                      # group on z
        h = block_id("z") * HEAD_GROUP + block_id("x")
        b = 0
    else:
        bx = block_id("x")
        h = block_id("y")
        if layout == "bshd":
            b = block_id("z")
        else:
            b = 0
    return b, h, bx


@helper
def produce_tile(q_src, k_src, v_src, q_s, k_s, v_s, q_full, q_empty, k_full, v_full, kv_empty,
                 nj, bx, qc, kc, i):
    """The producer's thread, one tile (its i-th): Q's tile (once the previous tile's last
    S = Q K^T has retired, PERSIST), then K and V of every visited key block into the ring."""
    if PERSIST:
        wait(q_empty[0], (i & 1) ^ 1)
    expect_tx(q_full[0], nbytes(q_s[0]))
    tma_load(q_s[0], tile(q_src, (64 * WGS, HD), (bx, qc)), q_full[0])
    g0 = tile_start(nj, i)
    for j in range(nj):
        g = ring_pos(g0, j)
        s = g % S
        wait(kv_empty[s], ((g // S) & 1) ^ 1)
        if SPLIT_KV:
            expect_tx(k_full[s], nbytes(k_s[s]))
            tma_load(k_s[s], tile(k_src, (BN, HD), (j, kc)), k_full[s])
            expect_tx(v_full[s], nbytes(v_s[s]))
            tma_load(v_s[s], tile(v_src, (BN, HD), (j, kc)), v_full[s])
        else:
            expect_tx(k_full[s], nbytes(k_s[s]) + nbytes(v_s[s]))
            tma_load(k_s[s], tile(k_src, (BN, HD), (j, kc)), k_full[s])
            tma_load(v_s[s], tile(v_src, (BN, HD), (j, kc)), k_full[s])


@helper
def producer(Q, K, V, O, L, q_s, k_s, v_s, q_full, q_empty, k_full, v_full, kv_empty, SQ, SK,
             NB, HQN, layout, gb, gh, gbx, gnj):
    """Warpgroup 0: the block's tile (gb, gh, gbx) of gnj key blocks (or, PERSIST, each tile of
    its walk over the NB x HQN heads' query blocks): Q's tile once, then K and V of every
    visited key block."""
    with role("producer", warpgroups=(0,), regs=PRODUCER_REGS):
        with elect_one():
            if PERSIST:
                e0, e1, e2 = walk_extents(NB, HQN, SQ)
                for i, c0, c1, c2 in schedule(e0, e1, e2):
                    b, h, bx = walk_tile(c0, c1, c2)
                    q_src, k_src, v_src, o_dst, lse_dst, qc, kc, q0, k0, l0 = head_views(
                        Q, K, V, O, L, b, h, SQ, SK, HQN, layout)
                    produce_tile(q_src, k_src, v_src, q_s, k_s, v_s, q_full, q_empty, k_full,
                                 v_full, kv_empty, key_blocks(bx, SQ, SK), bx, qc, kc, i)
            else:
                q_src, k_src, v_src, o_dst, lse_dst, qc, kc, q0, k0, l0 = head_views(
                    Q, K, V, O, L, gb, gh, SQ, SK, HQN, layout)
                produce_tile(q_src, k_src, v_src, q_s, k_s, v_s, q_full, q_empty, k_full,
                             v_full, kv_empty, gnj, gbx, qc, kc, 0)


@helper
def scores_qk(s_acc, q_rows, k_stage):
    """S = Q K^T of one key block, issued (not waited for)."""
    assign(s_acc, 0.0)
    wgmma_fence()
    wgmma(s_acc, q_rows, k_stage)
    wgmma_commit()


@helper
def masked_scores(s_acc, j, bx, wg, q0, k0, SQ, SK, mask):
    """The scores of key block j in log2 units (scale folded in), masked when `mask`:
    -inf where the key is past the head's keys, or after the query's diagonal (causal)."""
    # S holds this warpgroup's 64 query rows against the BN keys of block j
    tag_assert(tag(s_acc).row == q0 + bx * (64 * WGS) + wg * 64 + coord(s_acc)[0]
               and tag(s_acc).col == k0 + j * BN + coord(s_acc)[1])
    if FOLD_SCALE:
        scores = add_tag(s_acc, iteration=j)      # raw: the scale is folded into exp2's FMA
    else:
        scores = add_tag(s_acc * SCALE_LOG2, iteration=j)
    if mask:
        if CAUSAL:
            keep = col_of(scores) + j * BN <= row_of(scores) + bx * (64 * WGS) + wg * 64 + SK - SQ
            # the mask keeps exactly the keys at or before the query's diagonal
            tag_assert(keep == (tag(scores).col - k0 <= tag(scores).row - q0 + SK - SQ))
        else:
            keep = col_of(scores) + j * BN < SK
            # the mask keeps exactly the head's keys
            tag_assert(keep == (tag(scores).col < k0 + SK))
        masked = select(keep, scores, -inf)
    else:
        masked = scores
    return masked


@helper
def online_softmax(masked, m_i, l_i, o_acc, j):
    """One block of the online softmax: the new row max, P = exp2(S - m), the row sum and
    O rescaled; P in the register-A layout of the P V wgmma."""
    m_new = maximum(m_i, row_max(masked))
    tag_assert(tag(m_new).row == tag(masked).row and tag(m_new).iteration == j)
    if FOLD_SCALE:     # m is in raw units; s * c - m * c is one FMA an element
        m_scaled = m_new * SCALE_LOG2
        p = exp2(masked * SCALE_LOG2 - m_scaled, poly_every=EXP2_POLY)
        alpha = exp2((m_i - m_new) * SCALE_LOG2)
    else:
        p = exp2(masked - m_new, poly_every=EXP2_POLY)
        alpha = exp2(m_i - m_new)
    assign(l_i, l_i * alpha + row_sum(p))
    assign(o_acc, o_acc * alpha)
    p16 = convert_layout(cast(p, DT), "wgmma_a_rs_16bit")
    assign(m_i, m_new)
    return p16


@helper
def accumulate_pv(o_acc, p16, v_stage):
    """O += P V of one key block, issued (not waited for)."""
    wgmma_fence()
    wgmma(o_acc, p16, v_stage, b_major="mn")
    wgmma_commit()


@helper
def block_step(s_acc, m_i, l_i, o_acc, q_rows, k_s, v_s, k_full, v_full, kv_empty, j, g0, bx,
               wg, q0, k0, SQ, SK, mask):
    """One key block, in order: S = Q K^T, the softmax, O += P V, the stage released (its
    ring position g0 + j, PERSIST; j otherwise)."""
    g = ring_pos(g0, j)
    s = g % S
    wait(k_full[s], (g // S) & 1)
    if PINGPONG:
        if wg == 0:
            named_barrier(TURN, 256)     # after warpgroup 1 has issued this block's S
    scores_qk(s_acc, q_rows, k_s[s])
    if PINGPONG:
        if wg == 1:
            named_barrier(TURN, 256)     # warpgroup 0 issues its S only now
    wgmma_wait(0)
    if DEFER:
        if j > 0:      # P V of block j - 1 is done too: its stage is free
            with elect_one():
                arrive(kv_empty[(g - 1) % S])
    masked = masked_scores(s_acc, j, bx, wg, q0, k0, SQ, SK, mask)
    p16 = online_softmax(masked, m_i, l_i, o_acc, j)
    if SPLIT_KV:
        wait(v_full[s], (g // S) & 1)
    accumulate_pv(o_acc, p16, v_s[s])
    if DEFER == 0:
        wgmma_wait(0)
        with elect_one():
            arrive(kv_empty[s])


@helper
def consume_tile(o_dst, lse_dst, q_rows, k_s, v_s, q_full, q_empty, k_full, v_full, kv_empty,
                 m_i, l_i, o_acc, s_acc, nj, bx, wg, qc, q0, k0, l0, SQ, SK, i):
    """A consumer warpgroup, one tile (its i-th): S = Q K^T of every visited key block, the
    masked online softmax, O += P V; then O / l (and the log-sum-exp) into the head's rows.
    q0, k0 and l0 are the first rows of the head's queries, keys and log-sum-exps in Q, K
    and L (tags name rows of the whole tensors)."""
    g0 = tile_start(nj, i)
    wait(q_full[0], i & 1)
    if OVERLAP:
        # S of block j + 1 is issued before the softmax of block j and runs under it
        s_cur = fragment(fp32, (64, BN), f"wgmma_acc_m64n{BN}", init=0.0)
        wait(k_full[0], 0)
        scores_qk(s_acc, q_rows, k_s[0])
        wgmma_wait(0)
        for j in range(nj):
            s = j % S
            assign(s_cur, s_acc)
            if j + 1 < nj:
                wait(k_full[(j + 1) % S], ((j + 1) // S) & 1)
                scores_qk(s_acc, q_rows, k_s[(j + 1) % S])
            masked = masked_scores(s_cur, j, bx, wg, q0, k0, SQ, SK, 1)
            p16 = online_softmax(masked, m_i, l_i, o_acc, j)
            if SPLIT_KV:
                wait(v_full[s], (j // S) & 1)
            accumulate_pv(o_acc, p16, v_s[s])
            wgmma_wait(0)
            with elect_one():
                arrive(kv_empty[s])
    elif MASK == "edge":
        # the blocks every row keeps whole skip the mask; the diagonal and tail are masked
        nf = unmasked_blocks(bx, nj, SQ, SK)
        for j in range(nf):
            block_step(s_acc, m_i, l_i, o_acc, q_rows, k_s, v_s, k_full, v_full, kv_empty,
                       j, g0, bx, wg, q0, k0, SQ, SK, 0)
        for j in range(nf, nj):
            block_step(s_acc, m_i, l_i, o_acc, q_rows, k_s, v_s, k_full, v_full, kv_empty,
                       j, g0, bx, wg, q0, k0, SQ, SK, 1)
    else:
        for j in range(nj):
            block_step(s_acc, m_i, l_i, o_acc, q_rows, k_s, v_s, k_full, v_full, kv_empty,
                       j, g0, bx, wg, q0, k0, SQ, SK, 1)
    if PERSIST:    # every S = Q K^T of the tile has retired (each block's own wait): Q's
        with elect_one():      # tile may be refilled, under this tile's last P V and epilogue
            arrive(q_empty[0])
    if DEFER:
        if OVERLAP == 0:        # the last block's P V, and its stage
            wgmma_wait(0)
            if nj > 0:
                with elect_one():
                    arrive(kv_empty[ring_pos(g0, nj - 1) % S])
    # one reciprocal a row and a multiply an element (an IEEE division an element took ~14
    # instructions: a tenth of a 1024-key tile's issue slots at d = 64)
    out = cast(o_acc * (1.0 / l_i), DT)
    dst = tile(o_dst, (64, HD), (bx * WGS + wg, qc))
    # O's column c holds column d = c % HD of the KV head its query head reads (bshd
    # declares heads(O, HD, group=G); in bhsd c < HD and this is c)
    tag_assert(tag(out).row == coord(dst)[0]
               and tag(out).col == coord(dst)[1] // HD // G * HD + coord(dst)[1] % HD)
    store(dst, out)
    # the log-sum-exp of every row (natural log of the scaled scores), always stored: it
    # costs 4 bytes a row beside O's 2 HD
    if FOLD_SCALE:
        lse = (m_i * SCALE_LOG2 + log2(l_i)) * LN2
    else:
        lse = (m_i + log2(l_i)) * LN2
    lse_tile = tile(lse_dst, (64,), (bx * WGS + wg,))
    # L numbers the head's rows from l0 as Q does from q0 (bshd: L is (B*HQ*SQ), Q is
    # (B*SQ, HQ*D), so the two row numbers differ by the head's place)
    tag_assert(tag(lse).row - q0 == coord(lse_tile)[0] - l0)
    store(lse_tile, lse)


@helper
def consumer(Q, K, V, O, L, q_s, k_s, v_s, q_full, q_empty, k_full, v_full, kv_empty, SQ, SK,
             NB, HQN, layout, gb, gh, gbx, gnj):
    """The WGS consumer warpgroups (1, 2, ...), 64 query rows each, over the block's tile
    (gb, gh, gbx) of gnj key blocks (or, PERSIST, each tile of its walk; the softmax state reset
    at each)."""
    with role("consumer", warpgroups=CONSUMERS, regs=CONSUMER_REGS):
        wg = warpgroup_index()
        q_rows = tile(q_s[0], (64, HD), (wg, 0))
        m_i = fragment(fp32, (64,), f"rows(wgmma_acc_m64n{BN})", init=-inf)
        l_i = fragment(fp32, (64,), f"rows(wgmma_acc_m64n{BN})", init=0.0)
        o_acc = fragment(fp32, (64, HD), f"wgmma_acc_m64n{HD}", init=0.0)
        s_acc = fragment(fp32, (64, BN), f"wgmma_acc_m64n{BN}")
        if PERSIST:
            e0, e1, e2 = walk_extents(NB, HQN, SQ)
            for i, c0, c1, c2 in schedule(e0, e1, e2):
                b, h, bx = walk_tile(c0, c1, c2)
                q_src, k_src, v_src, o_dst, lse_dst, qc, kc, q0, k0, l0 = head_views(
                    Q, K, V, O, L, b, h, SQ, SK, HQN, layout)
                assign(m_i, -inf)
                assign(l_i, 0.0)
                assign(o_acc, 0.0)
                consume_tile(o_dst, lse_dst, q_rows, k_s, v_s, q_full, q_empty, k_full, v_full,
                             kv_empty, m_i, l_i, o_acc, s_acc, key_blocks(bx, SQ, SK), bx, wg,
                             qc, q0, k0, l0, SQ, SK, i)
        else:
            q_src, k_src, v_src, o_dst, lse_dst, qc, kc, q0, k0, l0 = head_views(
                Q, K, V, O, L, gb, gh, SQ, SK, HQN, layout)
            consume_tile(o_dst, lse_dst, q_rows, k_s, v_s, q_full, q_empty, k_full, v_full,
                         kv_empty, m_i, l_i, o_acc, s_acc, gnj, gbx, wg, qc, q0, k0, l0, SQ, SK,
                         0)


@helper
def attend(Q, K, V, O, L, SQ, SK, NB, HQN, layout):
    """Both kernels' body once their tensors are declared: the shared memory, the barriers,
    the block's one tile (the same for both roles) unless PERSIST (each role walks its
    tiles of the NB x HQN heads), the producer and the consumers."""
    q_s = smem(DT, (64 * WGS, HD), swizzle="128B")
    k_s = smem(DT, (BN, HD), stages=S, swizzle="128B")
    v_s = smem(DT, (BN, HD), stages=S, swizzle="128B")
    if PERSIST:
        gb, gh, gbx, gnj = 0, 0, 0, 0
    else:
        gb, gh, gbx = grid_tile(SQ, layout)
        gnj = key_blocks(gbx, SQ, SK)
    q_full, q_empty, k_full, v_full, kv_empty = ring()
    producer(Q, K, V, O, L, q_s, k_s, v_s, q_full, q_empty, k_full, v_full, kv_empty, SQ, SK,
             NB, HQN, layout, gb, gh, gbx, gnj)
    consumer(Q, K, V, O, L, q_s, k_s, v_s, q_full, q_empty, k_full, v_full, kv_empty, SQ, SK,
             NB, HQN, layout, gb, gh, gbx, gnj)


@kernel(grid=("(SQ + 64 * WGS - 1) // (64 * WGS) * (1 - PERSIST)"
              " + BLOCKS * BLOCKS_PER_SM * PERSIST" if HEAD_GROUP == 1 else HEAD_GROUP,
              "RQ // SQ * (1 - PERSIST) + PERSIST" if HEAD_GROUP == 1
              else "(SQ + 64 * WGS - 1) // (64 * WGS)",
              1 if HEAD_GROUP == 1 else "RQ // SQ // HEAD_GROUP"),
        block=128 * (1 + WGS), blocks_per_sm=BLOCKS_PER_SM,
        block_order="reversed" if LPT else "forward")
def attention_bhsd(Q: Tensor["RQ", HD, DT], K: Tensor["RK", HD, DT], V: Tensor["RK", HD, DT],
                   O: Tensor["RQ", HD, DT], L: Tensor["RQ", fp32], SQ: Dim, SK: Dim):
    assume(RQ % SQ == 0)               # B*HQ heads of SQ rows
    assume(RK % SK == 0)               # B*HK heads of SK rows
    assume(RQ // SQ == G * (RK // SK))  # HQ = G * HK
    if CAUSAL:
        assume(SK >= SQ)
    if HEAD_GROUP > 1:
        assume((RQ // SQ) % HEAD_GROUP == 0)   # whole groups of heads on grid x
    attend(Q, K, V, O, L, SQ, SK, 1, RQ // SQ, "bhsd")


@kernel(grid=("(SQ + 64 * WGS - 1) // (64 * WGS) * (1 - PERSIST)"
              " + BLOCKS * BLOCKS_PER_SM * PERSIST",
              "CQ // HD * (1 - PERSIST) + PERSIST",
              "RQ // SQ * (1 - PERSIST) + PERSIST"),
        block=128 * (1 + WGS), blocks_per_sm=BLOCKS_PER_SM,
        block_order="reversed" if LPT else "forward")
def attention_bshd(Q: Tensor["RQ", "CQ", DT], K: Tensor["RK", "CK", DT],
                   V: Tensor["RK", "CK", DT], O: Tensor["RQ", "CQ", DT], L: Tensor["RL", fp32],
                   SQ: Dim, SK: Dim):
    assume(RQ % SQ == 0)               # B batches of SQ rows
    assume(RK % SK == 0)               # the same B batches of SK rows
    assume(RK // SK == RQ // SQ)
    assume(CQ % HD == 0)               # HQ heads of HD columns
    assume(CQ == G * CK)               # HQ = G * HK
    assume(CK % HD == 0)               # HK heads of HD columns
    assume(RL % SQ == 0)               # B * HQ * SQ log-sum-exp entries
    assume(RL // SQ == RQ // SQ * (CQ // HD))
    if CAUSAL:
        assume(SK >= SQ)
    heads(Q, HD, group=G)              # query head h (columns [h*HD, +HD)) reads KV head h // G
    heads(O, HD, group=G)
    heads(K, HD)
    heads(V, HD)
    attend(Q, K, V, O, L, SQ, SK, RQ // SQ, CQ // HD, "bshd")


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
