"""Which GEMM configuration each shape gets (tile width, raster group, grid).

A heuristic table; the measurements behind it are in docs/perf-log.md. BM is 128 (two
consumer warpgroups of 64 rows). BN = 256 keeps the most data reuse per block; when that
leaves too few tiles to fill the GPU's 132 SMs (skinny M), narrower tiles give more
blocks work. ARGUS_GEMM_CONFIG='{"BN": 128}' overrides (benchmarks compare variants so).
"""

from __future__ import annotations

import json
import os

SMS = 132
WIDTHS = (256, 128, 64)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def stages_for(bn: int, bk: int = 64, epilogue_bytes: int = 0) -> int:
    """The deepest ring (at most 8 stages) that fits in 220 KB of shared memory next to an
    epilogue tile: 4 stages at BN=256, 6 at 128, 8 at 64 for BK=64 and no epilogue tile."""
    per_stage = (128 + bn) * bk * 2
    return max(2, min(8, (220 * 1024 - epilogue_bytes) // per_stage))


def config_for(m: int, n: int, k: int, layout: str) -> dict:
    # Measured on the H200 (docs/perf-log.md, v2): narrower tiles paid off for x @ W.T at
    # 256x8192x8192 (0.73 with BN=128) but not for x @ W there (0.46 with BN=128 against
    # 0.61 with BN=256), while 128x4096x4096 went from 0.30 to 0.74 with BN=64 (x @ W). So
    # x @ W narrows only when 128x256 tiles would leave most SMs idle.
    fill = 0.75 if layout == "nk" else 0.35
    bn = WIDTHS[0]
    for bn in WIDTHS:
        if _cdiv(m, 128) * _cdiv(n, bn) >= fill * SMS:
            break
    cfg = {"BLOCKS": SMS, "BN": bn, "S": stages_for(bn)}
    override = os.environ.get("ARGUS_GEMM_CONFIG")
    if override:
        cfg.update(json.loads(override))
    cfg["ACC"] = f"wgmma_acc_m64n{cfg['BN']}"
    if cfg.get("SPLIT"):
        cfg.pop("GROUP", None)          # the split-K schedule is row-major
    return cfg


# What the library GEMM can be asked for by knob (argus.agent.gemm_config names), and what
# its DSL kernel supports today; anything else is refused with the supported values.
FIXED_KNOBS = {"BM": 128, "consumers": 2, "warp_specialized": True, "cluster_m": 1,
               "cluster_n": 1, "raster": "m", "persistent": True}
SPLITS = (1, 2, 3, 4, 6, 8)          # split_k > 1: argus/kernels/gemm_splitk.py
EPILOGUES = ("direct", "smem_tma")   # smem_tma: argus/kernels/gemm_epilogue.py


def knobs_to_config(knobs: dict, layout: str, m: int, n: int, k: int) -> dict:
    """Constants of argus/kernels/gemm.py for the knobs given; defaults from config_for."""
    from argus.runtime.launch_errors import LaunchError

    cfg = config_for(m, n, k, layout)
    problems = []
    for name, value in knobs.items():
        if name in FIXED_KNOBS:
            if value != FIXED_KNOBS[name]:
                problems.append(f"{name}={value!r} (the DSL GEMM has {name}="
                                f"{FIXED_KNOBS[name]!r} only)")
        elif name == "BN":
            step = 64 if layout == "kn" else 8
            if not (isinstance(value, int) and 0 < value <= 256 and value % step == 0):
                problems.append(f"BN={value!r} (a multiple of {step} up to 256 for this layout)")
            else:
                cfg["BN"], cfg["ACC"] = value, f"wgmma_acc_m64n{value}"
        elif name == "BK":
            if value not in (64, 128):
                problems.append(f"BK={value!r} (64 or 128: whole 128-byte swizzle rows)")
            else:
                cfg["BK"] = value
        elif name == "epilogue":
            if value not in EPILOGUES:
                problems.append(f"epilogue={value!r} (one of {', '.join(EPILOGUES)})")
            elif value == "smem_tma":
                cfg["EPILOGUE"] = "smem_tma"
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
    if cfg.get("SPLIT") and cfg.get("EPILOGUE") == "smem_tma":
        problems.append("split_k with epilogue='smem_tma' (split-K adds its partial sums "
                        "with red.global.add, not through a shared-memory tile)")
    if problems:
        raise LaunchError("the DSL GEMM cannot run " + "; ".join(problems))
    if "stages" not in knobs:       # the deepest ring that fits next to the epilogue tile
        tile = 128 * cfg["BN"] * 2 if cfg.get("EPILOGUE") == "smem_tma" else 0
        cfg["S"] = stages_for(cfg["BN"], cfg.get("BK", 64), tile)
    a_stage = 128 * cfg.get("BK", 64) * 2
    b_stage = cfg["BN"] * cfg.get("BK", 64) * 2
    epilogue_tile = 128 * cfg["BN"] * 2 if cfg.get("EPILOGUE") == "smem_tma" else 0
    if cfg["S"] * (a_stage + b_stage) + epilogue_tile + 1024 + 16 * cfg["S"] > 227 * 1024:
        raise LaunchError(f"{cfg['S']} stages of {a_stage + b_stage} B"
                          + (f" and a {epilogue_tile} B epilogue tile" if epilogue_tile else "")
                          + " exceed the 227 KB of shared memory a block can have; use fewer "
                          "stages")
    return cfg
