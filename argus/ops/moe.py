"""`argus.ops.moe(x, router_logits, w13, w2, top_k, renormalize=True, deterministic=True)`:
the fused MoE layer (SiLU-gated experts, top-k softmax routing) on the device, every kernel
a DSL kernel of argus/kernels/:

1. moe_route.py: `moe_topk` (softmax, top-k, weights), `moe_count` (tokens per expert),
   `moe_place` (slots sorted by expert: `ids`, `slots`, the weight of each slot); a decode
   batch's `moe_place` counts the entries itself (COUNT_HERE, `ROUTE_COUNT_HERE`: one
   launch fewer);
2. moe_gate_up.py: H = silu(x[ids] W1[e]^T) * (x[ids] W3[e]^T), the token rows gathered
   through the slot list (no permuted copy of x);
3. moe_down.py: Yd = w * (H W2[e]^T), the routing weight in the epilogue;
4. moe_combine.py: out[t] = sum_j Yd[slots[j*T + t]] (deterministic), or fp32 atomic adds
   into a zeroed buffer (`deterministic=False`), then rounded.

Layouts (T tokens, H hidden, E experts, I intermediate; all contiguous, one CUDA device):
- x: (T, H), bf16 or fp16; the output is (T, H) in x's dtype.
- router_logits: (T, E), any float dtype (the router reads it as fp32).
- w13: (2, E, I, H) in x's dtype: w13[0] the gate projections, w13[1] the up projections
  (an (E, 2I, H) vLLM w13 converts once with `w.view(E, 2, I, H).transpose(0, 1)
  .contiguous()`).
- w2: (E, H, I) in x's dtype, the down projections.
- H % 128 == 0, I % 128 == 0 (whole TMA tiles of the weights), 1 <= top_k <= E.

No host synchronisation: the counts stay on the device; the grids are sized by the worst
case (every launch's grid follows from T, E and the shapes only) and blocks without work exit
at once, so the layer can be captured in a CUDA graph. Only experts that received a token are
read (an expert with no slots has no work items). Decode batches (T <= DECODE_T) use narrower
n-tiles, so the few experts hit still spread over every SM (`config_for`).
Under ARGUS_INTERPRET=1 every kernel runs on the CPU interpreter instead (tests).
"""

from __future__ import annotations

import math

from argus.limits import SM_COUNT
from argus.runtime.launch_errors import LaunchError

from argus.runtime import environment

from .moe_calls import DECODE_T, Buffers, Plan, plan_for, plan_key
from .registry import plain_eager

DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16"}
# How the gate-up GEMM gathers its token rows (moe_gate_up.py GATHER): "warpgroup",
# gather_cp_async by all 128 producer threads, or "tma", one TMA box a row from one thread.
# Measured in one run (scripts/device_moe_gather_ab.sh, H100, 2026-12-06): the warpgroup form
# is 3.8-5.7x faster on the gate-up (Mixtral T=4096: 544 against 95 TFLOP/s) and correct on
# every case, so it is the default; "tma" stays as the reference form.
GATE_UP_GATHER = "warpgroup"
# Decode weight tiles 96 or 64 wide where 128-wide items leave SMs idle (decode_tile_width). Off:
# a prediction not yet measured (the thirtieth session got no device); the decode diagnosis
# measures it (scripts/device_moe_decode_diag.py, variant "tile rule").
DECODE_TILE_RULE = False
# A decode batch's router in two launches: moe_place counts the entries of the experts
# below its own (its first slot) and stores its expert's count (moe_route.py COUNT_HERE), so
# no moe_count runs. Prefill keeps moe_count: the count there is a full pass over the
# T * k entries that every place block would repeat.
ROUTE_COUNT_HERE = True
# A decode call's launches before the combine replayed as one CUDA graph once its inputs'
# addresses repeat (moe_graphs.py). Off: not yet run on a GPU (the thirty-first session got
# no device); the decode diagnosis measures it (variant "graphs").
DECODE_GRAPHS = False


def counts_in_place(t: int) -> bool:
    """Whether a batch of t tokens routes without moe_count (ROUTE_COUNT_HERE)."""
    return ROUTE_COUNT_HERE and t <= DECODE_T


def config_for(t: int, e: int, hidden: int, inter: int, top_k: int) -> dict:
    """The knobs of each GEMM for a layer shape: {"gate_up": {...}, "down": {...}} (kernel
    constants BN, S and the module constants ORDER, WG/CONSUMERS, SKIP_EMPTY and, for the
    gate-up, GATHER). Prefill: 128 x 256 gate-up tiles (two 128-wide accumulators) and 128 x 128 down
    tiles; decode: 64 x 128 tiles (one consumer warpgroup) and deeper rings (memory
    bound)."""
    if t <= DECODE_T:
        # one consumer warpgroup: 64-slot m-tiles, half the padding rows (H100, T=16: layer
        # 1.85 -> 1.17 ms, 0.92 -> 0.68); 128-wide weight tiles: half the items, each twice
        # as long (H100 sweep, 2026-12-06: Mixtral T=1/16/64 1.19/1.12/1.06x, fine-grained
        # 1.20/1.25/1.27x over 64-wide ones; docs/perf-log.md)
        # and a block skips the item walk of an expert without slots (most of 64 experts
        # at T = 1: fine-grained gate-up and down 114 / 115 -> 54 / 35 us with the tiles)
        one = {"WG": 1, "CONSUMERS": (1,), "SKIP_EMPTY": 1}
        gate_up_bn = decode_tile_width(t, e, top_k, inter) if DECODE_TILE_RULE else 128
        down_bn = decode_tile_width(t, e, top_k, hidden) if DECODE_TILE_RULE else 128
        # rings of ~200 KB either way: a narrower tile, more stages (a stage: the 64-row
        # token tile and the weight tiles, two of them in the gate-up)
        return {"gate_up": {"BN": gate_up_bn, "S": {128: 5, 96: 6, 64: 8}[gate_up_bn],
                            "ORDER": "n_major", "GATHER": GATE_UP_GATHER, **one},
                "down": {"BN": down_bn, "S": {128: 8, 96: 10, 64: 12}[down_bn],
                         "ORDER": "n_major", **one}}
    return {"gate_up": {"BN": 128, "S": 4, "ORDER": "n_major", "GATHER": GATE_UP_GATHER},
            "down": {"BN": 128, "S": 6, "ORDER": "n_major"}}


DECODE_TILE_WIDTHS = (128, 96, 64)       # the widest first: it wins ties


def decode_tile_width(t: int, e: int, top_k: int, rows: int, blocks: int = SM_COUNT) -> int:
    """BN of a decode GEMM's weight tiles (one of DECODE_TILE_WIDTHS) for `rows` weight rows
    an expert: the width that gives the busiest of the `blocks` persistent blocks the fewest
    weight bytes. A decode batch's items are (hit expert, n-tile), one m-tile each (T <= 64
    slots an expert); the experts hit are taken as uniform routing gives them,
    E (1 - (1 - k/E)^T) (k at T = 1): the shapes decide, never the data (no host sync). A
    narrower tile cuts an item's bytes and adds items: it wins when the 128-wide items leave
    SMs idle (fine-grained T = 1: the gate-up's 66 items on 132 SMs, 132 at 64 wide; the
    down's 96, 132 at 96 wide); it must win by 15%, as an item's fixed costs (its walk, the
    ring's fill, the epilogue) do not shrink with it."""
    hits = max(1, round(e * (1.0 - (1.0 - top_k / e) ** t)))

    def busiest(bn):
        items = hits * -(-rows // bn)
        return -(-items // blocks) * bn
    best = min(DECODE_TILE_WIDTHS, key=busiest)          # the first of equals: the widest
    return best if busiest(best) <= 0.85 * busiest(128) else 128


def route_block_tokens(t: int, e: int) -> int:
    """Tokens per block of the router's moe_topk (its BT). Each block holds its (BT, E)
    logits in the `blocked` layout, which the backend spreads over all 128 threads only when
    128 divides BT * E; every row result of its 4k + 2 row reductions is then held whole in
    every thread, so the block's latency grows with BT. The smallest BT that fills the
    threads, from 4 for a decode batch and from 8 for prefill, where more tokens a block pay
    for the per-block reductions (H100, scripts/device_moe_topk.py, 2026-12-06: E=64 k=6
    T=1 23 -> 7 us at BT 4, T=4096 23 -> 11 us at BT 8; E=128 k=8 T=8192 50 -> 26 us;
    BT 1 and 2 spread a row over a warp or more and were 3-17x slower)."""
    for bt in ((4, 8, 16, 32) if t <= DECODE_T else (8, 16, 32)):
        if bt * e % 128 == 0:
            return bt
    return 128 // math.gcd(128, e)


def route_block_entries(n: int) -> int:
    """Entries per tile (BS) of a router kernel that walks n entries a pass: moe_count's pass
    covers the T * k choices, each of moe_place's passes one choice's T tokens. One 128-entry
    tile (one entry a thread) when it holds them all, else 1024 (eight a thread): the pass
    count never grows, and a small batch's block-wide scans and selects run over 128 entries
    instead of 1024 (a decode batch's place runs k such passes in a chain)."""
    return 128 if n <= 128 else 1024


def kernels_for(t: int, e: int, hidden: int, inter: int, top_k: int, renormalize: bool,
                deterministic: bool, dtype: str, cfg: dict | None = None) -> dict:
    """The (module, kernel, overrides) of each launch of a call: what moe_into launches, and
    what a benchmark builds ahead (in parallel) before it times anything."""
    cfg = cfg or config_for(t, e, hidden, inter, top_k)
    route = {"E": e, "TOPK": top_k, "RENORM": int(bool(renormalize))}
    combine = "moe_combine" if deterministic else "moe_combine_atomic"
    here = counts_in_place(t)
    count = {} if here else {"count": ("moe_route", "moe_count",
                                       {**route, "BS": route_block_entries(t * top_k)})}
    return {"topk": ("moe_route", "moe_topk", {**route, "BT": route_block_tokens(t, e)}),
            **count,
            "place": ("moe_route", "moe_place", {**route, "BS": route_block_entries(t),
                                                  **({"COUNT_HERE": 1} if here else {})}),
            "gate_up": ("moe_gate_up", "moe_gate_up", {"E": e, "DT": dtype, **cfg["gate_up"]}),
            "down": ("moe_down", "moe_down", {"E": e, "DT": dtype, **cfg["down"]}),
            "combine": ("moe_combine", combine, {"TOPK": top_k, "DT": dtype})}


def check_layer(x, router_logits, w13, w2, top_k):
    """(T, H, E, I, dtype name) of a call, or LaunchError saying what to change. Reads only
    shapes, dtypes, devices and strides (the fake implementation checks with it too)."""
    import torch

    named = {"x": x, "router_logits": router_logits, "w13": w13, "w2": w2}
    for name, t in named.items():
        if not isinstance(t, torch.Tensor):
            raise LaunchError(f"moe: {name} must be a torch tensor, got {type(t).__name__}")
    if x.dim() != 2:
        raise LaunchError(f"moe: x must be (T, H), got {x.dim()}-D {tuple(x.shape)}")
    dtype = DTYPES.get(str(x.dtype))
    if dtype is None:
        raise LaunchError(f"moe: x must be bf16 or fp16, got {x.dtype}")
    t, hidden = x.shape
    if router_logits.dim() != 2 or router_logits.shape[0] != t:
        raise LaunchError(f"moe: router_logits must be (T, E) = ({t}, E), got "
                          f"{tuple(router_logits.shape)}")
    if not router_logits.dtype.is_floating_point:
        raise LaunchError(f"moe: router_logits must be a float tensor, got "
                          f"{router_logits.dtype}")
    e = router_logits.shape[1]
    if w13.dim() != 4 or w13.shape[0] != 2 or w13.shape[1] != e or w13.shape[3] != hidden:
        raise LaunchError(f"moe: w13 must be (2, E, I, H) = (2, {e}, I, {hidden}) (gate, then "
                          f"up), got {tuple(w13.shape)}; an (E, 2I, H) w13 converts with "
                          "w.view(E, 2, I, H).transpose(0, 1).contiguous()")
    inter = w13.shape[2]
    if w2.dim() != 3 or tuple(w2.shape) != (e, hidden, inter):
        raise LaunchError(f"moe: w2 must be (E, H, I) = ({e}, {hidden}, {inter}), got "
                          f"{tuple(w2.shape)}")
    for name in ("w13", "w2"):
        if named[name].dtype != x.dtype:
            raise LaunchError(f"moe: {name} must have x's dtype {x.dtype}, got "
                              f"{named[name].dtype}")
    for name, tensor in named.items():
        if not tensor.is_contiguous():
            raise LaunchError(f"moe: {name} must be contiguous (strides {tensor.stride()}); "
                              "call .contiguous()")
    devices = {str(tensor.device) for tensor in named.values()}
    if len(devices) != 1:
        raise LaunchError(f"moe: every tensor must be on one device, got {sorted(devices)}")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= e:
        raise LaunchError(f"moe: top_k must be an int in 1..E = 1..{e}, got {top_k!r}")
    if hidden % 128 or inter % 128 or hidden == 0 or inter == 0:
        raise LaunchError(f"moe: H = {hidden} and I = {inter} must be positive multiples of "
                          "128 (whole TMA tiles of the expert weights); pad the weights with "
                          "zeros")
    return t, hidden, e, inter, dtype


def moe(x, router_logits, w13, w2, top_k: int, renormalize: bool = True,
        deterministic: bool = True):
    """The MoE layer (see the module's docstring): the computation directly for a plain
    eager call, else through the torch op `argus::moe` (torch.compile, fake tensors)."""
    if plain_eager(x, router_logits, w13, w2):
        return moe_into(x, router_logits, w13, w2, top_k, renormalize, deterministic)
    import torch

    check_layer(x, router_logits, w13, w2, top_k)
    return torch.ops.argus.moe(x, router_logits, w13, w2, top_k, bool(renormalize),
                               bool(deterministic))


def moe_into(x, router_logits, w13, w2, top_k: int, renormalize: bool = True,
             deterministic: bool = True):
    """The computation: the launches on the current stream, nothing read back
    (moe_calls.py: the plan of the layer, worked out once, and its launches)."""
    return layer_plan(x, router_logits, w13, w2, top_k, renormalize,
                      deterministic).run(x, router_logits, w13, w2)


# what decides a layer's kernels besides its shapes: the interpreter and debug switches,
# and this module's configuration (config_for, the gate-up's gather, the router's tiles),
# which a benchmark's sweep and the tests replace
_env = environment.reader(("ARGUS_INTERPRET", "ARGUS_DEBUG"))


def layer_plan(x, router_logits, w13, w2, top_k: int, renormalize: bool = True,
               deterministic: bool = True) -> Plan:
    """The call's moe_calls.Plan: checked and built on a layer, switch setting or
    configuration not seen before, then reused."""
    def build():
        import torch

        t, hidden, e, inter, dtype = check_layer(x, router_logits, w13, w2, top_k)
        return Plan((t, hidden, e, inter), top_k, deterministic, x.dtype,
                    router_logits.dtype == torch.float32,
                    kernels_for(t, e, hidden, inter, top_k, renormalize, deterministic,
                                dtype), graphs=DECODE_GRAPHS)
    key = plan_key(x, router_logits, w13, w2, top_k, renormalize, deterministic,
                   (_env(), config_for, GATE_UP_GATHER, DECODE_TILE_RULE, route_block_entries,
                    ROUTE_COUNT_HERE, DECODE_GRAPHS))
    return plan_for(key, build)


def launches(x, router_logits, w13, w2, top_k: int, renormalize: bool = True,
             deterministic: bool = True, buffers: dict | None = None):
    """(out, [(role, launch)]): the layer's output buffer and its launches in order, each a
    no-argument callable on the current stream, on intermediates of their own (moe_into
    runs the same launches; a benchmark times each alone, on buffers an earlier run of the
    whole list has filled). A `buffers` dict is filled with the intermediates by name
    (experts, gates, counts, ids, slots, wsorted, h, yd), for a diagnosis that checks each
    launch's output."""
    plan = layer_plan(x, router_logits, w13, w2, top_k, renormalize, deterministic)
    out = x.new_empty((plan.t, plan.hidden))
    if plan.t == 0:
        return out, []
    bufs = Buffers(plan, x.device)
    if buffers is not None:
        buffers.update(bufs.named())
    return out, plan.steps(x, router_logits, w13, w2, bufs, False, out)


def reference(x, router_logits, w13, w2, top_k, renormalize=True):
    """The layer in float64 with torch (the benchmark's and the tests' oracle): softmax, the
    top-k (lowest index first among equal logits), weights renormalised when asked, then
    sum_j w_j * W2[e_j] (silu(W1[e_j] x) * W3[e_j] x) per token."""
    import torch

    xd = x.to(torch.float64)
    logits = router_logits.to(torch.float64)
    probs = torch.softmax(logits, dim=1)
    # stable descending order: among equal logits the lower expert index first
    order = torch.sort(-logits, dim=1, stable=True).indices[:, :top_k]
    weights = torch.gather(probs, 1, order)
    if renormalize:
        weights = weights / weights.sum(dim=1, keepdim=True)
    out = torch.zeros_like(xd)
    w1, w3, w2d = (w13[0].to(torch.float64), w13[1].to(torch.float64),
                   w2.to(torch.float64))
    for expert in range(router_logits.shape[1]):
        tok, j = torch.nonzero(order == expert, as_tuple=True)
        if tok.numel() == 0:
            continue
        rows = xd[tok]
        g, u = rows @ w1[expert].T, rows @ w3[expert].T
        y = (g * torch.sigmoid(g) * u) @ w2d[expert].T
        out.index_add_(0, tok, weights[tok, j, None] * y)
    return out
