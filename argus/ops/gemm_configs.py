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


def config_for(m: int, n: int, k: int, layout: str) -> dict:
    bn = WIDTHS[0]
    for bn in WIDTHS:
        if _cdiv(m, 128) * _cdiv(n, bn) >= 0.75 * SMS:
            break
    stages = {256: 4, 128: 6, 64: 8}[bn]     # as many as ~192 KB of shared memory holds
    cfg = {"BLOCKS": SMS, "BN": bn, "S": stages}
    override = os.environ.get("ARGUS_GEMM_CONFIG")
    if override:
        cfg.update(json.loads(override))
    cfg["ACC"] = f"wgmma_acc_m64n{cfg['BN']}"
    return cfg
