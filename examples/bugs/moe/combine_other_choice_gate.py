"""The combine (examples/moe_combine.py) weighing every choice with the gate of the
token's first choice: the gates tile is read at the block's token tile without the
choice's offset j * T, so the second expert's row is multiplied by the first expert's
weight.

Expected: tag.routing at line 42.
"""

import numpy as np

from argus.lang import (Tensor, assign, assume, bf16, block_id, cast, coord, const, fp32,
                        fragment, gather, int32, kernel, load, load_indices, segment, store,
                        tag, tile)

TOPK = 2          # experts per token


@kernel(grid=("T // BT", "N // BN"), block=128)
def moe_combine(Yd: Tensor["P", "N", bf16], slots: Tensor["P", int32], gates: Tensor["P", fp32],
                O: Tensor["T", "N", bf16], BT: const = 64, BN: const = 64):
    assume(P == TOPK * T)
    assume(T % BT == 0)
    assume(N % BN == 0)
    # the routing's layout (moe_route writes it so; taken as given here, see
    # docs/design/verifier-moe.md): entry j*T + t of slots and gates is the j-th choice of
    # token t, every slot is a row of Yd, and row t of O is token t's output
    for j in range(TOPK):
        slots_j = segment(slots, j * T, T)
        assume(tag(slots_j).token == coord(slots_j)[0] - j * T and tag(slots_j).choice == j)
        gates_j = segment(gates, j * T, T)
        assume(tag(gates_j).token == coord(gates_j)[0] - j * T and tag(gates_j).choice == j)
    assume(slots[coord(slots)[0]] < P)
    assume(tag(O).token == coord(O)[0])
    bt = block_id("x")
    bn = block_id("y")
    acc = fragment(fp32, (BT, BN), "blocked", init=0.0)
    for j in range(TOPK):
        part = j * (T // BT) + bt
        rows = load_indices(tile(slots, (BT,), (part,)))
        y = cast(gather(Yd, rows, bn, BN, "blocked"), fp32)
        g = load(tile(gates, (BT,), (bt,)), "rows(blocked)")
        assign(acc, acc + y * g)
    store(tile(O, (BT, BN), (bt, bn)), cast(acc, bf16))


def reference(Yd, slots, gates):
    """O[t] = sum_j gates[j*T + t] * Yd[slots[j*T + t]] in fp32."""
    Yd = np.asarray(Yd, np.float32)
    slots = np.asarray(slots, np.int64).reshape(TOPK, -1)
    gates = np.asarray(gates, np.float32).reshape(TOPK, -1)
    if slots.min() < 0 or slots.max() >= Yd.shape[0]:
        raise ValueError(f"slots must be in 0..{Yd.shape[0] - 1}")
    return sum(gates[j][:, None] * Yd[slots[j]] for j in range(TOPK))


def inputs(rng, symbols):
    """For `argus run`: every slot used once (a random permutation, as a routing gives) and
    positive router weights that sum to 1 per token."""
    p, t = symbols["P"], symbols["T"]
    slots = rng.permutation(p)
    gates = rng.random((TOPK, t)) + 0.05
    gates /= gates.sum(axis=0)
    return {"slots": slots.astype(np.int32), "gates": gates.reshape(-1).astype(np.float32)}
