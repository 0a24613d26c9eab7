"""The router of the MoE layer (argus.ops.moe), on the device in three kernels, no host
synchronisation: from router logits to what the expert GEMMs take.

- `moe_topk` (a block per BT tokens, 128 | BT * E): the softmax of each token's E logits (fp32), its
  TOPK largest (the lowest expert index first among equal logits) and their weights, the
  softmax probabilities, renormalised over the k chosen when RENORM (the weight of choice j
  is then exp(l_j - m) / sum_i exp(l_i - m) over the chosen i only). Writes `experts` and
  `gates`, j-major: entry j*T + t is the j-th choice of token t.
- `moe_count` (a block per expert): the number of tokens that chose expert e.
- `moe_place` (a block per expert): each expert's first slot is the exclusive prefix sum of
  the counts; its entries get the slots first + 0, 1, ... in entry order (choice, then
  token). With COUNT_HERE = 1 (a decode batch: argus.ops.moe) it needs no moe_count: block e
  counts the entries of the experts below e itself (its first slot) and stores counts[e],
  the entries it placed. It scatters the
  token of every slot (`ids`), the slot of every (token, choice) (`slots`, j-major) and the
  routing weight of every slot (`wsorted`, for the down GEMM's epilogue).

The slot list is therefore sorted by expert, then choice, then token: `counts`, `ids` feed the grouped
GEMMs, `slots` the combine. Token tiles reaching past T are masked (segments of the j-major
arrays; the rows past T are not counted). Module constants: E, TOPK, RENORM, BT (argus.ops
specialises them per layer).

`argus check` proves what each kernel writes (docs/design/verifier-moe.md, "The router"):
the j-th largest logit's column and its weight at entry j*T + t (the layout `assume`s name
each entry's token, choice and the weights' `norm`), the count of each expert, and each
entry's slot in the list sorted by expert, then entry.
"""

from argus.lang import (Tensor, assign, assume, block_id, cast, col_of, coord, element,
                        exp2, fp32, fragment, int32, kernel, load, load_indices, prefix_sum,
                        row_max, row_of, row_sum, scatter, segment, select, store, tag,
                        tag_assert, tile, to_indices)

E = 8             # experts
TOPK = 2          # experts per token
RENORM = 1        # 1: the k weights of a token sum to 1; 0: the softmax probabilities
BT = 32           # tokens per tile of moe_topk (argus.ops.moe.route_block_tokens picks it)
BS = 1024         # entries per tile of moe_count and moe_place (8 a thread, "blocked")
COUNT_HERE = 0    # 1: moe_place counts the experts' entries itself (then moe_count is not run)
LOG2E = 1.4426950408889634


@kernel(grid=("(T + BT - 1) // BT",), block=128)
def moe_topk(L: Tensor["T", E, fp32], experts: Tensor["P", int32], gates: Tensor["P", fp32]):
    assume(P == TOPK * T)
    assume(tag(L).token == coord(L)[0])
    for j in range(TOPK):
        experts_j = segment(experts, j * T, T)
        assume(tag(experts_j).token == coord(experts_j)[0] - j * T
               and tag(experts_j).choice == j)
        gates_j = segment(gates, j * T, T)
        # norm: the weights are normalised over the `norm` largest logits (all E: the
        # softmax probabilities; the k chosen when RENORM)
        assume(tag(gates_j).token == coord(gates_j)[0] - j * T and tag(gates_j).choice == j
               and tag(gates_j).norm == TOPK * RENORM + E * (1 - RENORM))
    tt = block_id("x")
    l = load(tile(segment(L, 0, T), (BT, E), (tt, 0)), "blocked")
    col = cast(col_of(l), fp32)
    m = row_max(l)
    p = exp2((l - m) * LOG2E)                     # the softmax's numerators
    # the k largest: each round takes the largest logit left (lowest index among equals)
    # and sets it to -inf, so the chosen experts are where `rest` is -inf
    rest = fragment(fp32, (BT, E), "blocked")
    assign(rest, l)
    for j in range(TOPK):
        mj = row_max(rest)
        ej = -row_max(-select(rest == mj, col, 1.0 * E))
        assign(rest, select(col == ej, -inf, rest))
    if RENORM == 1:
        denom = row_sum(select(rest == -inf, p, 0.0))       # over the k chosen
    else:
        denom = row_sum(p)                                    # over all E
    # the same selection again, now storing each choice with its weight
    again = fragment(fp32, (BT, E), "blocked")
    assign(again, l)
    for j in range(TOPK):
        mj = row_max(again)
        ej = -row_max(-select(again == mj, col, 1.0 * E))
        assign(again, select(col == ej, -inf, again))
        g = exp2((mj - m) * LOG2E) / denom
        x = cast(ej, int32)
        g_dst = tile(segment(gates, j * T, T), (BT,), (tt,))
        x_dst = tile(segment(experts, j * T, T), (BT,), (tt,))
        tag_assert(tag(g).token == coord(g_dst)[0] - j * T)
        tag_assert(tag(x).token == coord(x_dst)[0] - j * T)
        store(g_dst, g)
        store(x_dst, x)


@kernel(grid=(E,), block=128)
def moe_count(experts: Tensor["P", int32], counts: Tensor[E, int32]):
    e = block_id("x")
    total = fragment(fp32, (BS,), "blocked", init=0.0)
    for pt in range((P + BS - 1) // BS):
        x = cast(load(tile(experts, (BS,), (pt,)), "blocked"), fp32)
        real = cast(row_of(x), fp32) + pt * BS < P          # entries past P read 0
        assign(total, total + select(x == e, select(real, 1.0, 0.0), 0.0))
    per = cast(total, int32)
    n = element(prefix_sum(per), BS - 1) + element(per, BS - 1)
    c = fragment(fp32, (1,), "rows(blocked)", init=0.0)
    store(tile(counts, (1,), (e,)), cast(c + n, int32))


@kernel(grid=(E,), block=128)
def moe_place(experts: Tensor["P", int32], gates: Tensor["P", fp32], counts: Tensor[E, int32],
              ids: Tensor["P", int32], slots: Tensor["P", int32], wsorted: Tensor["P", fp32]):
    assume(P % TOPK == 0)
    T = P // TOPK                                              # tokens
    e = block_id("x")
    NTT = (T + BS - 1) // BS
    for j in range(TOPK):
        experts_j = segment(experts, j * T, T)
        assume(tag(experts_j).token == coord(experts_j)[0] - j * T
               and tag(experts_j).choice == j)
        gates_j = segment(gates, j * T, T)
        assume(tag(gates_j).token == coord(gates_j)[0] - j * T and tag(gates_j).choice == j)
        slots_j = segment(slots, j * T, T)
        assume(tag(slots_j).token == coord(slots_j)[0] - j * T and tag(slots_j).choice == j)
    if COUNT_HERE == 1:     # the expert's first slot: the entries of the experts below it
        # (the whole array in BS-entry tiles, not per choice: one tile at T = 1)
        below = fragment(fp32, (1,), "rows(blocked)", init=0.0)
        for pt in range((P + BS - 1) // BS):
            x = cast(load(tile(experts, (BS,), (pt,)), "blocked"), fp32)
            real = cast(row_of(x), fp32) + pt * BS < P          # entries past P read 0
            less = cast(select(x < e, select(real, 1.0, 0.0), 0.0), int32)
            n = element(prefix_sum(less), BS - 1) + element(less, BS - 1)
            assign(below, below + n)
        first = element(cast(below, int32), 0)
    else:                   # the exclusive prefix sum of the counts moe_count stored
        cnt = load_indices(tile(counts, (E,), (0,)))
        first = element(prefix_sum(cnt), e)
    seen = fragment(fp32, (1,), "rows(blocked)", init=0.0)     # its entries placed so far
    for j in range(TOPK):
        for tt in range(NTT):
            x_src = tile(segment(experts, j * T, T), (BS,), (tt,))
            x = cast(load(x_src, "blocked"), fp32)
            g = load(tile(segment(gates, j * T, T), (BS,), (tt,)), "blocked")
            token = cast(row_of(x), fp32) + tt * BS
            hit = cast(select(x == e, select(token < T, 1.0, 0.0), 0.0), int32)
            before = element(cast(seen, int32), 0) + first          # slots taken so far
            ahead = prefix_sum(hit)                                 # this tile's, exactly
            slot = ahead + before
            idx = select(x == e, select(token < T, slot, -1), -1)
            at = to_indices(idx)
            tok = cast(row_of(idx) + tt * BS, int32)                # the entry's token:
            tag_assert(tok == coord(x_src)[0] - j * T)              # entry j*T + t is t's
            scatter(ids, at, 0, tok)
            scatter(wsorted, at, 0, select(x == e, g, 0.0))
            entry = select(x == e, select(token < T, cast(token, int32) + j * T, -1), -1)
            scatter(slots, to_indices(entry), 0, select(x == e, slot, 0))
            n = element(ahead, BS - 1) + element(hit, BS - 1)
            assign(seen, seen + n)
    if COUNT_HERE == 1:
        store(tile(counts, (1,), (e,)), cast(seen, int32))    # the entries it placed


def reference(L, topk, renormalize=True):
    """(counts, experts, gates, ids, slots, wsorted) of top-k softmax routing of the logits
    L (T, E) in float64: the k largest logits per token (lowest index first among equal
    ones), weights the softmax probabilities (renormalised over the k when asked), slots
    sorted by expert, then choice, then token; per-choice arrays j-major."""
    import numpy as np

    L = np.asarray(L, np.float64)
    t, e = L.shape
    top = np.argsort(-L, axis=1, kind="stable")[:, :topk]                 # (T, k)
    p = np.exp(L - L.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    g = np.take_along_axis(p, top, axis=1)
    if renormalize:
        g /= g.sum(axis=1, keepdims=True)
    order = sorted((top[tok, j], j, tok) for tok in range(t) for j in range(topk))
    ids = np.array([tok for _, _, tok in order], np.int64)
    slots = np.empty((topk, t), np.int64)
    wsorted = np.empty(t * topk)
    for s, (_, j, tok) in enumerate(order):
        slots[j, tok] = s
        wsorted[s] = g[tok, j]
    counts = np.bincount(top.reshape(-1), minlength=e)
    return counts, top.T.reshape(-1), g.T.reshape(-1), ids, slots.reshape(-1), wsorted
