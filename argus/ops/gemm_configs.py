"""Which GEMM configuration each shape gets, and what the GEMM can be asked for by knob.

A shape's knobs come from the configuration model (gemm_model.py), except for the shapes
measured on the H200 one by one (argus/ops/gemm_tuned.json, by benchmarks/gemm_sweep.py;
ARGUS_GEMM_TUNED=FILE reads another, an empty file none); knobs given to matmul override
them; the result is the set
of module constants argus/kernels/gemm.py (or gemm_splitk.py) is specialised with.
ARGUS_GEMM_CONFIG='{"BN": 128}' overrides constants directly (benchmarks compare variants
so). The measurements behind the model are in docs/perf-log.md.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from argus.limits import SM_COUNT, SMEM_PER_BLOCK

WIDTHS = (256, 128, 64)
TUNED_FILE = Path(__file__).with_name("gemm_tuned.json")

# What the library GEMM can be asked for by knob (argus.agent.gemm_config names), and what
# its DSL kernel supports today; anything else is refused with the supported values.
FIXED_KNOBS = {"warp_specialized": True, "cluster_n": 1, "raster": "m", "persistent": True}
BMS = (64, 128)                      # gemm.py's WG consumer warpgroups of 64 rows each
SPLITS = (1, 2, 3, 4, 6, 8)          # split_k > 1: argus/kernels/gemm_splitk.py
EPILOGUES = ("direct", "smem_tma", "tma_chunks")   # gemm.py's EPILOGUE
CLUSTERS_M = (1, 2)                  # gemm.py's CM: B tiles multicast to 2 blocks along M


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def stages_for(bn: int, bk: int = 64, epilogue_bytes: int = 0, bm: int = 128) -> int:
    """The deepest ring (at most 12 stages) that fits in 220 KB of shared memory next to an
    epilogue tile: 4 stages at BN=256, 6 at 128, 8 at 64 for BM=128, BK=64 and no epilogue
    tile."""
    per_stage = (bm + bn) * bk * 2
    return max(2, min(12, (220 * 1024 - epilogue_bytes) // per_stage))


def smem_bytes(stages: int, per_stage: int, epilogue_bytes: int) -> int:
    """Shared memory of the kernel: the ring, its two barriers (8 B each) a stage, the
    epilogue buffers and 1 KB for aligning the dynamic allocation."""
    return stages * (per_stage + 16) + epilogue_bytes + 1024


def deepest_ring(per_stage: int, epilogue_bytes: int) -> int:
    """The most stages (2 to 12) the whole 227 KB holds next to the epilogue buffers: 4
    stages of 48 KB beside the two 16 KB column buffers of the "tma_chunks" epilogue
    (BM = 128, BN = 256)."""
    stages = (SMEM_PER_BLOCK - smem_bytes(0, per_stage, epilogue_bytes)) // (per_stage + 16)
    return max(2, min(12, stages))


def heuristic_knobs(m: int, n: int, k: int, layout: str) -> dict:
    """Knobs for a shape the tuned table does not hold: the configuration model's choice
    (gemm_model.py: every configuration of the space priced by waves, tile quantisation,
    per-step rates and fixed costs). A fresh dict each call (callers add to it)."""
    return dict(_chosen(m, n, k, layout))


@lru_cache(maxsize=4096)
def _chosen(m: int, n: int, k: int, layout: str) -> tuple:
    """The model's choice for a shape, priced once: the ranking prices ~20 configurations
    (~0.3 ms), and the agent's space asks it for each of thousands of candidates."""
    from .gemm_model import choose
    return tuple(choose(m, n, k, layout).items())


def _under(knobs: dict, base: dict) -> dict:
    """A caller's knobs on top of the shape's own configuration, less what of the latter
    would contradict them: split-K runs without a TMA-store epilogue or clusters, and
    BM / consumers go together."""
    base = dict(base)
    drop = set()
    if knobs.get("split_k", 1) > 1:
        drop |= {"epilogue", "cluster_m"}
    if "epilogue" in knobs or "cluster_m" in knobs:
        drop |= {"split_k"}
    if "BN" in knobs:                  # the epilogue and cluster were chosen for its width
        drop |= {"epilogue", "cluster_m"}
    if "BM" in knobs or "consumers" in knobs:
        drop |= {"BM", "consumers", "epilogue", "cluster_m"}
    for name in drop - set(knobs):
        base.pop(name, None)
    return {**knobs, **{name: value for name, value in base.items() if name not in knobs}}


@lru_cache(maxsize=8)
def _tuned_table(path: str) -> dict:
    try:
        with open(path) as f:
            return json.load(f).get("shapes", {})
    except FileNotFoundError:
        return {}


def tuned_knobs(m: int, n: int, k: int, layout: str) -> dict | None:
    """The knobs measured fastest for exactly this shape and B layout, if measured."""
    path = os.environ.get("ARGUS_GEMM_TUNED") or str(TUNED_FILE)
    knobs = _tuned_table(path).get(layout, {}).get(f"{m}x{n}x{k}")
    return dict(knobs) if knobs is not None else None


# what a knob left out of a tuned entry means: the kernels' defaults
KNOB_DEFAULTS = {"BM": 128, "BN": 256, "split_k": 1, "cluster_m": 1, "epilogue": "direct"}


def shape_knobs(m: int, n: int, k: int, layout: str) -> dict:
    """Every knob of the shape's configuration: its tuned entry (the knobs it leaves out at
    the kernels' defaults), else the model's choice."""
    tuned = tuned_knobs(m, n, k, layout)
    if tuned is None:
        return heuristic_knobs(m, n, k, layout)
    return {**KNOB_DEFAULTS, **tuned}


def config_for(m: int, n: int, k: int, layout: str) -> dict:
    """The constants of this shape's kernel: its knobs (tuned, else heuristic), then any
    ARGUS_GEMM_CONFIG override."""
    return knobs_to_config({}, layout, m, n, k)


def knobs_to_config(knobs: dict, layout: str, m: int, n: int, k: int) -> dict:
    """Constants of argus/kernels/gemm.py: the shape's own knobs (tuned, else heuristic)
    when none are given, else the knobs given on top of the heuristic's."""
    from argus.runtime.launch_errors import LaunchError

    # the tuned entry is a whole configuration for a call without knobs; a caller's knobs
    # replace it, the ones they leave out coming from the heuristic
    merged = _under(knobs, heuristic_knobs(m, n, k, layout)) if knobs else \
        shape_knobs(m, n, k, layout)
    if merged.get("epilogue") == "tma_chunks" and "BN" not in knobs and \
            merged.get("BN", 256) % 128:
        merged["BN"] = 128     # the heuristic's narrow tile, widened to one pair of blocks
    cfg: dict = {"BLOCKS": SM_COUNT, "BN": 256}
    problems = []
    for name, value in merged.items():
        if name in FIXED_KNOBS:
            if value != FIXED_KNOBS[name]:
                problems.append(f"{name}={value!r} (the DSL GEMM has {name}="
                                f"{FIXED_KNOBS[name]!r} only)")
        elif name == "BM":
            if value not in BMS:
                problems.append(f"BM={value!r} (one of {', '.join(map(str, BMS))}: 64 rows "
                                "per consumer warpgroup)")
            elif value == 64:
                cfg["WG"], cfg["CONSUMERS"] = 1, (1,)
        elif name == "consumers":
            if value not in (1, 2):
                problems.append(f"consumers={value!r} (1 or 2; BM = 64 * consumers)")
            elif value == 1:
                cfg["WG"], cfg["CONSUMERS"] = 1, (1,)
        elif name == "BN":
            # gemm_nn's K x N tile of B: rows of whole 32-byte swizzle units
            step = 16 if layout == "kn" else 8
            if not (isinstance(value, int) and 0 < value <= 256 and value % step == 0):
                problems.append(f"BN={value!r} (a multiple of {step} up to 256 for this layout)")
            else:
                cfg["BN"] = value
        elif name == "BK":
            if value not in (64, 128):
                problems.append(f"BK={value!r} (64 or 128: whole 128-byte swizzle rows)")
            else:
                cfg["BK"] = value
        elif name == "epilogue":
            if value not in EPILOGUES:
                problems.append(f"epilogue={value!r} (one of {', '.join(EPILOGUES)})")
            elif value != "direct":
                cfg["EPILOGUE"] = value
        elif name == "cluster_m":
            if value not in CLUSTERS_M:
                problems.append(f"cluster_m={value!r} (one of "
                                f"{', '.join(map(str, CLUSTERS_M))})")
            elif value > 1:
                cfg["CM"] = value
        elif name == "split_k":
            if value not in SPLITS:
                problems.append(f"split_k={value!r} (one of {', '.join(map(str, SPLITS))})")
            elif value > 1:
                cfg["SPLIT"] = value
        elif name == "stages":
            cfg["S"] = value
        elif name == "group":
            cfg["GROUP"] = value
        else:
            problems.append(f"unknown knob {name!r}")
    if "BM" in merged and "consumers" in merged and merged["BM"] != 64 * merged["consumers"]:
        problems.append(f"BM={merged['BM']} with consumers={merged['consumers']} (BM is 64 "
                        "rows per consumer warpgroup)")
    override = os.environ.get("ARGUS_GEMM_CONFIG")
    if override:
        cfg.update(json.loads(override))
    bm = 64 * cfg.get("WG", 2)
    if cfg.get("SPLIT") and cfg.get("EPILOGUE", "direct") != "direct":
        problems.append(f"split_k with epilogue={cfg['EPILOGUE']!r} (split-K adds its partial "
                        "sums with red.global.add, not through a shared-memory tile)")
    if cfg.get("SPLIT") and cfg.get("CM", 1) > 1:
        problems.append("split_k with cluster_m > 1 (the split-K kernel runs on single "
                        "blocks)")
    if cfg.get("CM", 1) > 1 and cfg["BLOCKS"] % cfg["CM"]:
        problems.append(f"{cfg['BLOCKS']} blocks are not a whole number of "
                        f"{cfg['CM']}-block clusters")
    if problems:
        raise LaunchError("the DSL GEMM cannot run " + "; ".join(problems))
    bk = cfg.get("BK", 64)
    epilogue = cfg.get("EPILOGUE", "direct")
    if epilogue == "smem_tma" and cfg["BN"] % 64:
        raise LaunchError(f"epilogue='smem_tma' stores the tile through 128-byte swizzle rows: "
                          f"BN must be a multiple of 64, got {cfg['BN']}")
    if epilogue == "tma_chunks" and cfg["BN"] % 128:
        raise LaunchError(f"epilogue='tma_chunks' stores the tile in pairs of 64-column "
                          f"blocks: BN must be a multiple of 128, got {cfg['BN']}")
    epilogue_tile = {"smem_tma": bm * cfg["BN"] * 2, "tma_chunks": 2 * bm * 64 * 2}.get(
        epilogue, 0)
    if "S" not in cfg:        # the deepest ring that fits next to the epilogue tile
        cfg["S"] = deepest_ring((bm + cfg["BN"]) * bk * 2, epilogue_tile) \
            if epilogue == "tma_chunks" else stages_for(cfg["BN"], bk, epilogue_tile, bm)
    cfg["ACC"] = f"wgmma_acc_m64n{cfg['BN']}"
    if cfg.get("SPLIT"):
        cfg.pop("GROUP", None)          # the split-K schedule is row-major
    stage = (bm + cfg["BN"]) * bk * 2
    if smem_bytes(cfg["S"], stage, epilogue_tile) > SMEM_PER_BLOCK:
        raise LaunchError(f"{cfg['S']} stages of {stage} B"
                          + (f" and a {epilogue_tile} B epilogue tile" if epilogue_tile else "")
                          + f" exceed the {SMEM_PER_BLOCK // 1024} KB of shared memory a block "
                          "can have; use fewer stages")
    return cfg
