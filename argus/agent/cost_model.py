"""An analytical cost model of the Hopper GEMM: a prediction for a CPU-only machine.

It multiplies the dense tensor-core peak by efficiencies, each a published mechanism:
- wgmma issue: fixed per-instruction overhead, smaller N pays more (fast.cu worklog);
- shared-memory bandwidth: 128 B/clk/SM feeds the wgmma operands (A: 64 rows, B: BN rows);
- latency hiding: the ring must hold (stages-1) k-tiles of compute >= the load latency;
- consumer interleaving: one math warpgroup leaves issue gaps, two hide them (CUTLASS
  cooperative/ping-pong);
- wave quantisation over the 132 SMs, the epilogue and prologue left exposed (persistent
  + TMA-store epilogues hide most of it), L2->SM traffic (cut by cluster multicast) and
  DRAM traffic per wave from the raster order (grouped raster keeps a wave's footprint
  small), and the split-K reduction.
Time = max(compute incl. exposed epilogue, L2 time, DRAM time) + reduction + launch.
The absolute numbers are estimates (the sustained clock is a fraction of the spec clock);
what the planner needs is the ranking, and on a GPU it is replaced by measurement.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from argus.agent import resources as R
from argus.agent.gemm_config import GemmConfig
from argus.agent.task import GemmTask
from argus.agent.roofline_peaks import PEAKS, bound_seconds
from argus.limits import SM_COUNT

DEVICE = "H200"
SUSTAINED_CLOCK_FRACTION = 0.9   # H200 under wgmma load holds ~1.6-1.7 GHz of the 1.83 spec
HBM_BYTES_PER_S = 4.25e12        # device-to-device copy measured on this project's H200
L2_BYTES_PER_S = 10e12           # L2 -> SM, an estimate (about 2.4x HBM)
LOAD_LATENCY_S = 1.0e-6          # TMA load from L2/HBM into shared memory, order of magnitude
LAUNCH_S = 3e-6
SMEM_BYTES_PER_CLK = 128
TENSOR_FLOP_PER_CLK = 4096       # dense bf16 per SM: 989.4e12 / (132 x 1.83e9)


def _dtype_key(task: GemmTask) -> str:
    return "float8" if task.dtype == "float8" else task.dtype


def peak_flops(task: GemmTask) -> float:
    return PEAKS[DEVICE]["flops"][_dtype_key(task)] * SUSTAINED_CLOCK_FRACTION


def tile_coords(t: int, tiles_m: int, tiles_n: int, raster: str, group: int) -> tuple[int, int]:
    """Linear schedule index -> (tile_m, tile_n): grouped raster (Triton's L2 swizzle)."""
    slow, fast = (tiles_m, tiles_n) if raster == "n" else (tiles_n, tiles_m)
    width = group * fast
    first = (t // width) * group
    size = max(1, min(slow - first, group))
    s, f = first + (t % width) % size, (t % width) // size
    return (s, f) if raster == "n" else (f, s)


@lru_cache(maxsize=4096)
def wave_footprint(tiles_m: int, tiles_n: int, raster: str, group: int,
                   per_wave: int) -> tuple[int, int]:
    """Sums over waves of the distinct tile rows and distinct tile columns each wave reads."""
    rows_total = cols_total = 0
    count = tiles_m * tiles_n
    for start in range(0, count, per_wave):
        rows, cols = set(), set()
        for t in range(start, min(start + per_wave, count)):
            m, n = tile_coords(t, tiles_m, tiles_n, raster, group)
            rows.add(m)
            cols.add(n)
        rows_total += len(rows)
        cols_total += len(cols)
    return rows_total, cols_total


def predict(cfg: GemmConfig, task: GemmTask) -> dict[str, Any]:
    """The predicted time and its breakdown; call only on a config with no Violation."""
    e = task.element_bytes
    occ = max(1, R.occupancy(cfg, task))
    sm_rate = peak_flops(task) / SM_COUNT
    clock = 1.83e9 * SUSTAINED_CLOCK_FRACTION

    e_issue = cfg.BN / (cfg.BN + 24)
    smem_demand = TENSOR_FLOP_PER_CLK * (64 + cfg.BN) / (64 * cfg.BN)
    e_smem = min(1.0, SMEM_BYTES_PER_CLK / smem_demand)
    inflight = cfg.consumers * occ
    e_cons = 0.82 if inflight == 1 else (0.95 if inflight == 2 else 0.97)
    e_ws = 1.0 if cfg.warp_specialized else 0.85   # math warps also issue loads and waits
    k_split = task.K // cfg.split_k
    t_ktile = 2.0 * cfg.BM * cfg.BN * cfg.BK / (sm_rate / occ)
    ahead = cfg.stages - 1
    e_pipe = (min(1.0, ahead * t_ktile / LOAD_LATENCY_S) if ahead > 0
              else t_ktile / (t_ktile + LOAD_LATENCY_S))
    if cfg.BK == 128:
        e_issue *= 0.98          # two TMA boxes per operand per stage under a 128B swizzle
    cluster = cfg.cluster_m * cfg.cluster_n
    e_cluster = 0.99 if cluster > 1 else 1.0
    efficiency = e_issue * e_smem * e_cons * e_ws * e_pipe * e_cluster

    tiles_m, tiles_n = task.M // cfg.BM, task.N // cfg.BN
    tiles = tiles_m * tiles_n * cfg.split_k
    per_wave = SM_COUNT * occ
    waves = math.ceil(tiles / per_wave)
    t_tile = 2.0 * cfg.BM * cfg.BN * k_split / (sm_rate / occ) / efficiency
    store_rate = HBM_BYTES_PER_S / SM_COUNT * (1.0 if cfg.epilogue != "direct" else 0.5)
    t_epilogue = cfg.BM * cfg.BN * (4 if cfg.split_k > 1 else 2) / (store_rate / occ)
    if cfg.persistent and cfg.warp_specialized:
        exposed_epi = 0.15 if cfg.epilogue != "direct" else 0.6
        exposed_prologue = 0.1
    else:
        exposed_epi = exposed_prologue = 1.0 / occ
        if cfg.persistent:
            exposed_epi = exposed_prologue = min(exposed_epi, 0.8)
    t_wave = t_tile + exposed_epi * t_epilogue + exposed_prologue * LOAD_LATENCY_S
    t_compute = waves * t_wave

    l2_bytes = tiles * (k_split * (cfg.BM * e / cfg.cluster_n + cfg.BN * e / cfg.cluster_m))
    t_l2 = l2_bytes / L2_BYTES_PER_S
    rows, cols = wave_footprint(tiles_m, tiles_n, cfg.raster, cfg.group,
                            max(1, per_wave // cfg.split_k))
    dram = (rows * cfg.BM + cols * cfg.BN) * task.K * e + task.M * task.N * 2
    reduce_bytes = 2 * cfg.split_k * task.M * task.N * 4 if cfg.split_k > 1 else 0
    t_dram = dram / HBM_BYTES_PER_S
    t_reduce = reduce_bytes / HBM_BYTES_PER_S
    total = max(t_compute, t_l2, t_dram) + t_reduce + LAUNCH_S
    bound = max((("compute", t_compute), ("l2", t_l2), ("dram", t_dram)), key=lambda p: p[1])[0]
    floor = bound_seconds(task.flops, task.min_bytes, _dtype_key(task), PEAKS[DEVICE])
    return {
        "time_s": total, "tflops": task.flops / total / 1e12,
        "predicted_bound": bound, "waves": tiles / per_wave, "tiles": tiles,
        "efficiency": {"wgmma_issue": e_issue, "smem_bandwidth": e_smem, "consumers": e_cons,
                       "warp_specialization": e_ws, "latency_hiding": e_pipe,
                       "cluster": e_cluster, "wave_quantisation": tiles / (waves * per_wave)},
        "arithmetic_intensity_flop_per_byte": task.flops / dram,
        "dram_bytes": dram, "l2_bytes": l2_bytes,
        "times_s": {"compute": t_compute, "l2": t_l2, "dram": t_dram, "reduce": t_reduce},
        "roofline_floor_s": floor["bound_s"], "roofline_fraction": floor["bound_s"] / total,
        "occupancy": occ, "clock_hz": clock,
    }
