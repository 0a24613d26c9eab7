"""The combine that ends the MoE layer (argus.ops.moe): every token's output is the sum over
its TOPK choices of the expert output rows, O[t] = sum_j Yd[slots[j*T + t]].

`Yd` holds the expert outputs in slot order, the routing weight already applied by the down
GEMM's epilogue (argus/kernels/moe_down.py); `slots[j*T + t]` is the slot of token t's j-th
choice (j-major, argus/kernels/moe_route.py), so the BT tokens of a block read one contiguous
tile of slots per choice. Token tiles reaching past T read slot 0 there and store nothing.

- `moe_combine` (deterministic): a block per BT tokens x BN columns gathers the TOPK rows of
  each of its tokens and sums them in fp32 in choice order; each output element is written
  once, so the result is the same on every run.
- `moe_combine_atomic`: a block per (token tile, column tile, choice) adds its gathered rows
  into the fp32 output with red.global.add (O32 zeroed first; the order of the k additions is
  the hardware's, so the last bits may differ between runs).
"""

from argus.lang import (Tensor, assign, assume, atomic_add, block_id, cast, coord, fp32,
                        fragment, gather, int32, kernel, load_indices, segment, store, tag,
                        tile)

TOPK = 2          # experts per token
DT = "bf16"       # bf16 or fp16
BT = 32           # tokens per block (64 spills at TOPK = 8)
BN = 64           # columns per block


@kernel(grid=("(T + BT - 1) // BT", "N // BN"), block=128)
def moe_combine(Yd: Tensor["P", "N", DT], slots: Tensor["P", int32], O: Tensor["T", "N", DT]):
    assume(P == TOPK * T)
    assume(N % BN == 0)
    # the routing's layout (moe_route writes it so, docs/design/verifier-moe.md): entry
    # j*T + t of slots is the j-th choice of token t, every slot is a row of Yd, and row t
    # of O is token t's output
    for j in range(TOPK):
        slots_j = segment(slots, j * T, T)
        assume(tag(slots_j).token == coord(slots_j)[0] - j * T and tag(slots_j).choice == j)
    assume(slots[coord(slots)[0]] < P)
    assume(tag(O).token == coord(O)[0])
    bt = block_id("x")
    bn = block_id("y")
    acc = fragment(fp32, (BT, BN), "blocked", init=0.0)
    for j in range(TOPK):
        rows = load_indices(tile(segment(slots, j * T, T), (BT,), (bt,)))
        assign(acc, acc + cast(gather(Yd, rows, bn, BN, "blocked"), fp32))
    store(tile(O, (BT, BN), (bt, bn)), cast(acc, DT))


@kernel(grid=("(T + BT - 1) // BT", "N // BN", TOPK), block=128)
def moe_combine_atomic(Yd: Tensor["P", "N", DT], slots: Tensor["P", int32],
                       O32: Tensor["T", "N", fp32]):
    assume(P == TOPK * T)
    assume(N % BN == 0)
    for j in range(TOPK):
        slots_j = segment(slots, j * T, T)
        assume(tag(slots_j).token == coord(slots_j)[0] - j * T and tag(slots_j).choice == j)
    assume(slots[coord(slots)[0]] < P)
    assume(tag(O32).token == coord(O32)[0])
    bt = block_id("x")
    bn = block_id("y")
    j = block_id("z")
    rows = load_indices(tile(segment(slots, j * T, T), (BT,), (bt,)))
    atomic_add(tile(O32, (BT, BN), (bt, bn)), cast(gather(Yd, rows, bn, BN, "blocked"), fp32))


def reference(Yd, slots, topk):
    """O[t] = sum_j Yd[slots[j*T + t]] in float64."""
    import numpy as np

    Yd = np.asarray(Yd, np.float64)
    slots = np.asarray(slots, np.int64).reshape(topk, -1)
    return sum(Yd[slots[j]] for j in range(topk))
