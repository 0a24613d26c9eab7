"""A model of the library GEMM's time on one shape, per configuration, and the choice it makes.

The configuration of a shape is not looked up: every configuration of the space the DSL
kernels support (`space`: tile BM x BN, split-K, epilogue, 2-block clusters) is priced by
`predict`, and `choose` takes the cheapest. The price is what bounds a persistent
tile GEMM on a Hopper GPU:

- **waves**: the work items (tiles x K splits) are dealt to the SM_COUNT persistent
  blocks; the block with the most items decides the time (`rounds = ceil(items / SMs)`);
- **tile quantisation**: a tile past the edge of C costs as much as a full one (TMA fills
  the missing rows and columns with zeros, the tensor cores multiply them anyway);
- **per-step rate**: one k-step of a BM x BN tile costs its tensor-core time at the rate
  of that tile shape (narrow tiles and one consumer warpgroup reach less of the peak), or
  its shared-memory fill from L2, whichever is longer (the L2's rate is shared: with
  every SM filling, each gets its share);
- **memory**: the bytes the product must move from DRAM at least (A, B, C once; split-K's
  fp32 workspace: zeroed, added into by every split, read back), at the DRAM rate, when
  that is longer than the compute (decode shapes: the weights);
- **fixed costs**: the launch, a pipeline fill per block, the epilogue of each tile (the
  TMA-store epilogues overlap it with the next tile's mainloop), and split-K's extra
  kernel (round the workspace into C and clear it);
- **row pitch**: an operand whose rows do not start on 128-byte boundaries (K = 3304 of
  bf16: 6608 bytes a row) costs more to fill each stage from (every 128-byte row of a TMA
  box spans two lines); a 2-block cluster pairs the M tiles, so an odd count of them
  leaves one block of the last pair a tile of zeros.

(Copying such operands onto the grid first, weighed here from the ninth session on, was
measured on an H100 on 2026-12-06 to gain nothing and to lose 10-18% on large products;
matmul runs them as given.)

The constants (`Rates`) are fitted (tools/fit_gemm_model.py: least regret of the pick)
to timings of every configuration of the space on 108 (shape, layout) cases drawn at
random with seeds 11 and 12 (`scripts/device_gemm_sweep.py`; the H100 sweep of
2026-12-06, benchmarks/results/gemm-sweep-20261206-s17-h100.json; docs/perf-log.md), not
on the shapes the benchmark judges: fitted on one seed, the other's picks were within
1.1-1.2% of the fastest configuration measured (geomean); fitted on both, 0.6%. Autotuning (autotune.py) times the model's few best
candidates of a shape and keeps the winner; the model decides everywhere else.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from argus.limits import SM_COUNT

SPLITS = (1, 2, 3, 4, 6, 8)


@dataclass(frozen=True)
class Rates:
    """The rates of a Hopper GPU as the DSL GEMM sees them (microseconds, bytes, FLOPs).

    Fitted (tools/fit_gemm_model.py) to an H100 sweep of every configuration of the space
    on the 108 (shape, layout) cases of seeds 11 and 12 (benchmarks/results/
    gemm-sweep-20261206-s17-h100.json, 2026-12-06): mean regret of the pick 0.6% (geomean
    0.926 of cuBLAS; the fastest configuration of each case 0.932); fitted on one seed, the
    other's regret was 1.1-1.2%. The rates before (fitted to the H200 sweep of 2026-12-03,
    gemm-sweep-20261203-s8c.json, before BN = 192 and the zero-kept split-K workspace)
    regretted 2.6% on the H100 sweep and 2.4% on their own; these regret 1.5% on that H200
    sweep too, so they price both GPUs."""

    peak_tflops: float = 989.0          # dense bf16/fp16 tensor-core peak, the whole GPU
    # the share of that peak one k-step of a BM x BN tile reaches (fitted): one consumer
    # warpgroup (BM = 64) and 128-wide tiles reach less than the 128 x 256 tile
    mma_eff: tuple = (("128x256", 1.0), ("128x128", 0.78125), ("128x64", 0.248),
                      ("64x256", 0.7386), ("64x128", 0.675), ("64x64", 0.34),
                      ("128x192", 0.9615), ("64x192", 1.0))
    l2_gbps_per_sm: float = 139.0       # shared-memory fill rate of one SM from L2 (GB/s)
    # the L2's fill rate shared by every busy SM (GB/s): a 128 x 128 tile's 32 KB steps
    # outrun it when every SM fills at once (452x4096x11008 at 128 x 128: 87 us measured
    # on an H100, 55 us priced without it)
    l2_total_gbps: float = 16500.0
    dram_gbps: float = 17200.0          # fitted far above the copy bandwidth: the sweeps'
                                        # times are never bound by DRAM alone
    launch_us: float = 6.1              # launch + the first tile's pipeline fill
    epilogue_gbps_per_sm: float = 42.64  # direct stores of one SM's tile (GB/s)
    overlapped_epilogue: float = 0.35   # the share of a TMA-store epilogue left exposed
    # rounding the workspace into C (and clearing it) and what else a split costs
    split_extra_us: float = 10.24
    atomic_gbps: float = 770.5          # red.global.add of the fp32 partial sums (L2)
    cluster_gain: float = 1.24875       # compute time of a 2-block cluster, relative
    item_us: float = 0.46               # per work item: the tile's ramp and drain
    # the extra fill share of an operand whose row pitch is not a multiple of 128 bytes,
    # every SM filling: fitted (mean log error 0.01, mean deviation 0.12) to the 171 such
    # timings of the s8c sweep
    misaligned_fill: float = 1.75

    def efficiency(self, bm: int, bn: int) -> float:
        table = dict(self.mma_eff)
        key = f"{bm}x{bn}"
        if key in table:
            return table[key]
        # a width between two measured ones: the narrower one's rate
        widths = sorted(int(k.split("x")[1]) for k in table if k.startswith(f"{bm}x"))
        below = [w for w in widths if w <= bn] or widths[:1]
        return table[f"{bm}x{below[-1]}"]


RATES = Rates()


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Price:
    """A configuration's predicted time and what it is made of (microseconds)."""

    us: float
    compute_us: float
    memory_us: float
    fixed_us: float
    items: int
    rounds: int


PITCH_BYTES = 128      # a row pitch that is a multiple of this fills at the full rate


def misaligned(m: int, n: int, k: int, layout: str, elem_bytes: int = 2) -> tuple[bool, bool]:
    """(A, B) of contiguous operands: whether its row pitch is off the 128-byte grid (A's
    rows are K long; B's are N long in the K x N layout "kn", K long in "nk")."""
    b_row = n if layout == "kn" else k
    return (k * elem_bytes) % PITCH_BYTES != 0, (b_row * elem_bytes) % PITCH_BYTES != 0


def predict(m: int, n: int, k: int, knobs: dict, rates: Rates = RATES,
            elem_bytes: int = 2, off_pitch: tuple[bool, bool] = (False, False)) -> Price:
    """The predicted time of C = A @ B (M x K times K x N) with one configuration;
    `off_pitch`: whether A's and B's row pitches are off the 128-byte grid."""
    bm = knobs.get("BM", 128)
    bn = knobs.get("BN", 256)
    bk = knobs.get("BK", 64)
    split = knobs.get("split_k", 1)
    epilogue = knobs.get("epilogue", "direct")
    cluster = knobs.get("cluster_m", 1)
    tiles = _cdiv(_cdiv(m, bm), cluster) * cluster * _cdiv(n, bn)   # clusters pair M tiles
    items = tiles * split
    rounds = _cdiv(items, SM_COUNT)
    steps = _cdiv(_cdiv(k, bk), split)
    step_flops = 2.0 * bm * bn * bk
    sm_tflops = rates.peak_tflops / SM_COUNT * rates.efficiency(bm, bn)
    mma_us = step_flops / (sm_tflops * 1e6)
    # a 2-block cluster multicasts B: each block fills only half of B's tile from L2
    # the off-pitch cost grows with the SMs filling at once (the L2's requests, shared),
    # and comes from the rows really read (TMA reads none past the tensor's edge)
    busy = min(1.0, items / SM_COUNT)
    slow_a = 1.0 + rates.misaligned_fill * busy * off_pitch[0] * min(bm, m) / bm
    slow_b = 1.0 + rates.misaligned_fill * busy * off_pitch[1] * min(bn, n) / bn
    fill_bytes = (bm * slow_a + bn / cluster * slow_b) * bk * elem_bytes
    fill_us = max(fill_bytes / (rates.l2_gbps_per_sm * 1e3),
                  fill_bytes * min(items, SM_COUNT) / (rates.l2_total_gbps * 1e3))
    tile_out = bm * bn * (4 if split > 1 else elem_bytes)
    if split > 1:
        epi_us = tile_out / (rates.epilogue_gbps_per_sm * 1e3)
    elif epilogue == "direct":
        epi_us = tile_out / (rates.epilogue_gbps_per_sm * 1e3)
    else:
        epi_us = rates.overlapped_epilogue * tile_out / (rates.epilogue_gbps_per_sm * 1e3)
    compute_us = rounds * (steps * max(mma_us, fill_us) + epi_us + rates.item_us)
    if cluster > 1:
        compute_us *= rates.cluster_gain
    dram_bytes = (m * k + k * n + m * n) * elem_bytes
    memory_us = dram_bytes / (rates.dram_gbps * 1e3)
    fixed_us = rates.launch_us
    if split > 1:
        fixed_us += rates.split_extra_us + 4.0 * m * n * split / (rates.atomic_gbps * 1e3)
    return Price(max(compute_us, memory_us) + fixed_us, compute_us, memory_us, fixed_us,
                 items, rounds)


def space(m: int, n: int, k: int, layout: str) -> list[dict]:
    """Every configuration worth pricing for this shape, as argus.ops.matmul's knobs: tile
    BM (64 or 128 rows) x BN (64, 128, 256, and 192 with the whole-tile TMA-store
    epilogue), split-K where the tiles leave SMs idle, the chunked TMA-store epilogue for
    wide tiles, 2-block clusters for tall products."""
    widths = (256, 128, 64)
    out = []
    for bm in (128, 64):
        for bn in widths:
            tiles = _cdiv(m, bm) * _cdiv(n, bn)
            # every knob stated, so that nothing is filled in from elsewhere
            base = {"BM": bm, "BN": bn, "split_k": 1, "cluster_m": 1}
            out.append({**base, "epilogue": "direct"})
            if bn % 128 == 0:
                out.append({**base, "epilogue": "tma_chunks"})
                if _cdiv(m, bm) >= 2 and tiles >= SM_COUNT:
                    out.append({**base, "epilogue": "tma_chunks", "cluster_m": 2})
            if tiles < 4 * SM_COUNT:
                kt = _cdiv(k, 64)
                for split in SPLITS[1:]:
                    # every split keeps at least two k-steps; the items at most four waves
                    # (split-K also evens out a last wave that tiles alone leave part empty)
                    if kt >= 2 * split and tiles * split <= 4 * SM_COUNT:
                        out.append({**base, "epilogue": "direct", "split_k": split})
        # BN = 192 with the whole-tile TMA-store epilogue: 2/3 or 3/2 the tiles of its
        # neighbours, for shapes whose waves those quantise badly (measured on an H100,
        # 2026-12-06: 700x8192x8192 178 -> 137 us, 2000x2560x4096 82 -> 71 us; its direct
        # epilogue was slower everywhere)
        out.append({"BM": bm, "BN": 192, "split_k": 1, "cluster_m": 1, "epilogue": "smem_tma"})
    return out


def ranked(m: int, n: int, k: int, layout: str, rates: Rates = RATES,
           off_pitch: tuple[bool, bool] | None = None) -> list[tuple[float, dict]]:
    """(predicted microseconds, knobs) of the whole space, cheapest first; `off_pitch`
    defaults to that of contiguous operands."""
    off = misaligned(m, n, k, layout) if off_pitch is None else off_pitch
    priced = [(predict(m, n, k, knobs, rates, off_pitch=off).us, knobs)
              for knobs in space(m, n, k, layout)]
    priced.sort(key=lambda pair: pair[0])
    return priced


def choose(m: int, n: int, k: int, layout: str, rates: Rates = RATES,
           off_pitch: tuple[bool, bool] | None = None) -> dict:
    """The cheapest configuration of the space by the model (the kernel's default raster
    group: the sweep measured no other)."""
    return dict(ranked(m, n, k, layout, rates, off_pitch)[0][1])


def explain(m: int, n: int, k: int, layout: str, top: int = 5) -> str:
    """The model's few best configurations of a shape and their parts, one line each."""
    lines = []
    for us, knobs in ranked(m, n, k, layout)[:top]:
        p = predict(m, n, k, knobs)
        lines.append(f"{us:9.1f} us  compute {p.compute_us:8.1f}  memory {p.memory_us:8.1f}  "
                     f"fixed {p.fixed_us:5.1f}  items {p.items:5d} rounds {p.rounds:3d}  {knobs}")
    return "\n".join(lines)


def tflops(m: int, n: int, k: int, us: float) -> float:
    return 2.0 * m * n * k / (us * 1e6) if us > 0 else math.inf
