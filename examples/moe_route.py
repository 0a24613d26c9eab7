"""Top-2 routing of an MoE layer on the device: from router logits to what the expert kernels
take (examples/moe_gate_up.py, moe.py, moe_combine.py): the per-expert counts, the slot list
sorted by expert (`ids[p]`, the token of slot p), each token's slots and gates.

One block walks the tokens in tiles of BT, twice. Pass 1 picks each token's two experts
with row reductions over its E logits (the largest logit, the lowest expert index among
equal ones, then the largest of the rest), writes the gates (a softmax over the two
chosen logits) and the experts, and counts the tokens of each expert: per expert, the
tokens of the tile choosing it form a 0/1 vector whose exclusive prefix sum ranks them.
The exclusive prefix sum of the counts is each expert's first slot. Pass 2 places each
(token, choice) at slot = first slot of its expert + tokens of that expert in earlier tiles
+ its rank in the tile, so the slots of an expert are in token order, writes the slot of
each choice, and scatters each token id to its slots.

Outputs are j-major where they are per (token, choice): `experts[j*T + t]`,
`slots[j*T + t]`, `gates[j*T + t]` for the j-th choice of token t.
"""

import numpy as np

from argus.lang import (Tensor, assign, assume, cast, col_of, const, coord, element, exp2,
                        fp32, fragment, int32, kernel, load, prefix_sum, row_max, row_of,
                        scatter, segment, select, store, sync_block, tag, tag_assert, tile,
                        to_indices)

E = 8            # experts
TOPK = 2         # experts per token
LOG2E = 1.4426950408889634


@kernel(grid=(1,), block=128)
def moe_route(L: Tensor["T", E, fp32], counts: Tensor[E, int32], experts: Tensor["P", int32],
              ids: Tensor["P", int32], slots: Tensor["P", int32], gates: Tensor["P", fp32],
              BT: const = 64):
    assume(T % BT == 0)
    assume(P == TOPK * T)
    NTT = T // BT
    # the layout of what it writes (the expert kernels take it as given): row t of L is
    # token t; entry j*T + t of experts, slots and gates is the j-th choice of token t
    assume(tag(L).token == coord(L)[0])
    for j in range(TOPK):
        experts_j = segment(experts, j * T, T)
        assume(tag(experts_j).token == coord(experts_j)[0] - j * T
               and tag(experts_j).choice == j)
        slots_j = segment(slots, j * T, T)
        assume(tag(slots_j).token == coord(slots_j)[0] - j * T and tag(slots_j).choice == j)
        gates_j = segment(gates, j * T, T)
        assume(tag(gates_j).token == coord(gates_j)[0] - j * T and tag(gates_j).choice == j)
    total = fragment(fp32, (E,), "rows(blocked)", init=0.0)      # tokens per expert so far

    # pass 1: the two experts of every token, their gates, and the counts
    for tt in range(NTT):
        l = load(tile(L, (BT, E), (tt, 0)), "blocked")
        col = cast(col_of(l), fp32)
        m1 = row_max(l)
        e1 = -row_max(-select(l == m1, col, 1.0 * E))           # lowest index of the max
        rest = select(col == e1, -inf, l)
        m2 = row_max(rest)
        e2 = -row_max(-select(rest == m2, col, 1.0 * E))
        g1 = 1.0 / (exp2((m2 - m1) * LOG2E) + 1.0)
        # each token's first choice goes to entry t, its second to entry T + t
        g2 = 1.0 - g1
        first, second = tile(gates, (BT,), (tt,)), tile(gates, (BT,), (NTT + tt,))
        tag_assert(tag(g1).token == tag(first).token and tag(first).choice == 0)
        tag_assert(tag(g2).token == tag(second).token and tag(second).choice == 1)
        store(first, g1)
        store(second, g2)
        x1, x2 = cast(e1, int32), cast(e2, int32)
        first_e, second_e = tile(experts, (BT,), (tt,)), tile(experts, (BT,), (NTT + tt,))
        tag_assert(tag(x1).token == tag(first_e).token and tag(first_e).choice == 0)
        tag_assert(tag(x2).token == tag(second_e).token and tag(second_e).choice == 1)
        store(first_e, x1)
        store(second_e, x2)
        for e in range(E):
            chosen = select(e1 == e, 1.0, 0.0) + select(e2 == e, 1.0, 0.0)
            before = prefix_sum(chosen)
            n = element(cast(before, int32), BT - 1) + element(cast(chosen, int32), BT - 1)
            assign(total, total + select(row_of(total) == e, n, 0.0))
    store(tile(counts, (E,), (0,)), cast(total, int32))
    sync_block()                                   # pass 2 reads the experts pass 1 wrote

    # pass 2: place every (token, choice) at its slot
    base = fragment(fp32, (E,), "rows(blocked)")   # next free slot of each expert
    assign(base, prefix_sum(total))
    s1 = fragment(fp32, (BT,), "rows(blocked)")
    s2 = fragment(fp32, (BT,), "rows(blocked)")
    for tt in range(NTT):
        x1 = cast(load(tile(experts, (BT,), (tt,)), "rows(blocked)"), fp32)
        x2 = cast(load(tile(experts, (BT,), (NTT + tt,)), "rows(blocked)"), fp32)
        assign(s1, 0.0)
        assign(s2, 0.0)
        for e in range(E):
            chosen = select(x1 == e, 1.0, 0.0) + select(x2 == e, 1.0, 0.0)
            before = prefix_sum(chosen)
            first = element(cast(base, int32), e)
            assign(s1, s1 + select(x1 == e, before + first, 0.0))
            assign(s2, s2 + select(x2 == e, before + first, 0.0))
            n = element(cast(before, int32), BT - 1) + element(cast(chosen, int32), BT - 1)
            assign(base, base + select(row_of(base) == e, n, 0.0))
        slot1 = cast(s1, int32)
        slot2 = cast(s2, int32)
        store(tile(slots, (BT,), (tt,)), slot1)
        store(tile(slots, (BT,), (NTT + tt,)), slot2)
        scatter(ids, to_indices(slot1), 0, cast(row_of(s1) + tt * BT, int32))   # token ids
        scatter(ids, to_indices(slot2), 0, cast(row_of(s2) + tt * BT, int32))


def reference(L):
    """(counts, experts, ids, slots, gates) of top-2 routing of the logits L (T, E): the
    two largest logits per token (lowest index first among equal ones), gates their
    softmax, slots sorted by expert then token."""
    L = np.asarray(L, np.float64)
    t = L.shape[0]
    top = np.argsort(-L, axis=1, kind="stable")[:, :TOPK]                 # (T, TOPK)
    chosen = np.take_along_axis(L, top, axis=1)
    g = np.exp(chosen - chosen[:, :1])
    g /= g.sum(axis=1, keepdims=True)
    order = sorted((top[tok, j], tok, j) for tok in range(t) for j in range(TOPK))
    ids = np.array([tok for _, tok, _ in order])
    slots = np.empty((TOPK, t), np.int64)
    for p, (_, tok, j) in enumerate(order):
        slots[j, tok] = p
    counts = np.bincount(top.reshape(-1), minlength=L.shape[1])
    return counts, top.T.reshape(-1), ids, slots.reshape(-1), g.T.reshape(-1)
