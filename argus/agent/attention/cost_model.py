"""A CPU estimate of the library attention's time on an H200, for ranking configurations.

Per query block (128 rows, one block per SM: 384 threads at 168 registers fill the register
file) the kernel visits nj key blocks of BN keys; a key block costs, in SM clocks,
    t_mma   = 4 * 128 * BN * D / TENSOR_FLOP_PER_CLK      (S = Q K^T and O += P V)
    t_soft  = 128 * BN / MUFU_PER_CLK                       (exp2)
            + (128 * BN * ops + 128 * D) / FP32_PER_CLK     (max, FMA/sub, sum, pack, O's rescale;
                                                              ops +1 unscaled scores without
                                                              FOLD_SCALE, +2 compare/select when
                                                              the block is masked)
    t_iter  = t_mma + (1 - overlap) * t_soft + ITER_CLK
with overlap the share of the softmax hidden under the tensor cores: SOFTMAX_OVERLAP by the
two consumer warpgroups alone, OVERLAP_HIDES with OVERLAP=1 (S of block j+1 under the
softmax of j). The ring hides the load of a stage (latency plus the K and V bytes at an
SM's share of L2 bandwidth; SPLIT_KV lets S start when K alone has landed) when
(S - 1) * t_iter covers it, else the loop runs at that load's pace.
A block adds its prologue (Q's load) and epilogue (O and the log-sum-exp stored). Blocks
are list-scheduled on the 132 SMs in launch order (grid x fastest; LPT=1 starts each head's
last, longest causal query block first), and the time is the makespan, at least
the HBM time of reading Q, K, V and writing O once, plus the launch.

The constants are estimates (the clock a fraction of the spec's, the unit rates from the
Hopper tuning guide); on a GPU measurements replace the model, which then only ranks the
candidates not yet measured.
"""
from __future__ import annotations

import heapq
import math
from functools import lru_cache

from argus.agent.attention.config import AttentionConfig
from argus.agent.attention.task import AttentionTask
from argus.limits import SM_COUNT

CLOCK_HZ = 1.83e9 * 0.9            # sustained under load (cost_model.py's GEMM figure)
TENSOR_FLOP_PER_CLK = 4096         # dense bf16/fp16 per SM
MUFU_PER_CLK = 16                  # exp2 per SM per clock
FP32_PER_CLK = 128                 # fp32 lanes per SM
SOFTMAX_OPS = 4.5                  # max, FMA/sub, sum, half a pack per score
SOFTMAX_OVERLAP = 0.1              # hidden by the other consumer warpgroup's wgmma alone
OVERLAP_HIDES = 0.6                # with OVERLAP=1
ITER_CLK = 160                     # barrier waits, wgmma fence/commit/wait per key block
LOAD_LATENCY_CLK = 1650            # ~1 us from L2/HBM to shared memory by TMA
L2_BYTES_PER_CLK = 10e12 / SM_COUNT / CLOCK_HZ
HBM_BYTES_PER_S = 4.25e12
LAUNCH_S = 4e-6
MAX_SCHEDULED = 200_000


def block_rows(cfg: AttentionConfig) -> int:
    """Query rows a block takes: 64 per consumer warpgroup (the kernel's 64 * WGS)."""
    return 64 * cfg.WGS


def key_blocks(task: AttentionTask, bn: int, bx: int, sq: int, sk: int,
               bm: int = 128) -> tuple[int, int]:
    """(visited key blocks, of them wholly unmasked) of query block bx of bm rows: the
    kernel's key_blocks and unmasked_blocks helpers."""
    if task.causal:
        nj = min(-(-sk // bn), ((bx + 1) * bm + sk - sq + bn - 1) // bn)
        nf = min(sk // bn, (bx * bm + sk - sq + 1) // bn)
    else:
        nj = -(-sk // bn)
        nf = sk // bn
    nj = max(nj, 0)
    return nj, max(0, min(nf, nj))


def iteration_clocks(cfg: AttentionConfig, task: AttentionTask, masked: bool) -> float:
    bm = block_rows(cfg)
    t_mma = 4.0 * bm * cfg.BN * task.d / TENSOR_FLOP_PER_CLK
    scores = bm * cfg.BN
    ops = SOFTMAX_OPS + (0 if cfg.FOLD_SCALE else 1) + (2 if masked else 0)
    t_soft = scores / MUFU_PER_CLK + (scores * ops + bm * task.d) / FP32_PER_CLK
    hidden = OVERLAP_HIDES if cfg.OVERLAP else SOFTMAX_OVERLAP
    t_iter = t_mma + (1.0 - hidden) * t_soft + ITER_CLK
    stage_bytes = 2 * cfg.BN * task.d * 2
    waited = stage_bytes / 2 if cfg.SPLIT_KV else stage_bytes
    load = LOAD_LATENCY_CLK + waited / L2_BYTES_PER_CLK
    return max(t_iter, load / (cfg.S - 1))


def block_clocks(cfg: AttentionConfig, task: AttentionTask) -> list[float]:
    """The clocks of every query block of one head, bx = 0, 1, ..."""
    sq = min(task.sq, task.sk) if task.causal else task.sq      # the op's square causal part
    sk = task.sk
    masked_all = cfg.MASK == "all" or cfg.OVERLAP
    t_plain = iteration_clocks(cfg, task, False)
    t_masked = iteration_clocks(cfg, task, True)
    bm = block_rows(cfg)
    prologue = LOAD_LATENCY_CLK + bm * task.d * 2 / L2_BYTES_PER_CLK
    epilogue = bm * (task.d * 2 + 4) / L2_BYTES_PER_CLK
    out = []
    for bx in range(-(-sq // bm)):
        nj, nf = key_blocks(task, cfg.BN, bx, sq, sk, bm)
        plain = 0 if masked_all else nf
        out.append(prologue + plain * t_plain + (nj - plain) * t_masked + epilogue)
    return out


def makespan(durations: list[float], machines: int = SM_COUNT) -> float:
    """Greedy list scheduling in launch order: each block starts on the first free SM
    (equal blocks: whole waves; over MAX_SCHEDULED blocks, waves of the mean block)."""
    if not durations:
        return 0.0
    if len(set(durations)) == 1 or len(durations) > MAX_SCHEDULED:
        mean = sum(durations) / len(durations)
        return math.ceil(len(durations) / machines) * mean
    free = [0.0] * min(machines, len(durations))
    heapq.heapify(free)
    end = 0.0
    for d in durations:
        start = heapq.heappop(free)
        heapq.heappush(free, start + d)
        end = max(end, start + d)
    return end


def launch_order(cfg: AttentionConfig, task: AttentionTask, per_head: list[float]) -> list[float]:
    heads = task.b * task.hq
    order = per_head[::-1] if cfg.LPT else per_head   # the grid launched in reverse (LPT)
    group = getattr(cfg, "HEAD_GROUP", 1)
    if group > 1 and heads % group == 0:    # g heads' query blocks interleaved
        return [d for d in order for _ in range(group)] * (heads // group)
    return order * heads         # query blocks on x, then the next head


def predict(cfg: AttentionConfig, task: AttentionTask) -> dict:
    """The estimated time and its parts; call on an accepted configuration (memoised)."""
    return dict(_predict(cfg, task))


@lru_cache(maxsize=16384)
def _predict(cfg: AttentionConfig, task: AttentionTask) -> dict:
    per_head = block_clocks(cfg, task)
    order = launch_order(cfg, task, per_head)
    compute_s = makespan(order) / CLOCK_HZ
    e = 2
    dram = e * (task.b * task.hq * task.sq * task.d * 2 + task.b * task.hk * task.sk * task.d * 2)
    dram_s = dram / HBM_BYTES_PER_S
    total = max(compute_s, dram_s) + LAUNCH_S
    busy = sum(order) / CLOCK_HZ / SM_COUNT
    return {"time_s": total, "time_ms": total * 1e3,
            "tflops": task.flops / total / 1e12 if total > 0 else 0.0,
            "compute_s": compute_s, "dram_s": dram_s, "blocks": len(order),
            "balance": busy / compute_s if compute_s > 0 else 1.0,
            "iteration_clocks": iteration_clocks(cfg, task, False),
            "bound": "compute" if compute_s >= dram_s else "dram"}


def rank(configs, task: AttentionTask) -> list[tuple[float, AttentionConfig]]:
    """(predicted ms, config), fastest first, ties in the given order."""
    scored = [(predict(c, task)["time_ms"], i, c) for i, c in enumerate(configs)]
    scored.sort(key=lambda t: (t[0], t[1]))
    return [(ms, c) for ms, _, c in scored]


def geomean(values) -> float:
    values = [v for v in values if v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else 0.0
