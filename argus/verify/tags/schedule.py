"""Persistent schedules: the tile order must be a bijection onto the tile grid.

Block b's i-th tile is linear tile t = b + i * blocks (argus.ir.schedule); (b, i) -> t is a
bijection onto [0, tiles) by Euclidean division, so what needs a proof is the order's map
t -> tile coordinates (`argus.ir.schedule.tile_coords`, the function the interpreter and
the code generator use). z3 does not answer this for symbolic extents (the map divides by
min(group, n0 - first) and t ranges below n0 * n1: a symbolic x symbolic product; it
returns unknown after 20 s), so it is checked by ENUMERATION of that very function on
every grid up to GRID_LIMIT x GRID_LIMIT tiles, once per (order, group) and process.
The tag pass then checks the tile body for free tile coordinates.
"""

from __future__ import annotations

from functools import lru_cache

from argus.ir.schedule import tile_coords

GRID_LIMIT = 24


@lru_cache(maxsize=None)
def prove_bijection(order: str, group: int, rank: int = 2) -> tuple[bool, str]:
    """(True, how it was checked) or (False, the first grid and tiles that collide)."""
    if rank != 2:
        return True, f"a {rank}-D {order} order is row-major, a bijection by construction"
    for n0 in range(1, GRID_LIMIT + 1):
        for n1 in range(1, GRID_LIMIT + 1):
            seen: dict[tuple, int] = {}
            for t in range(n0 * n1):
                c = tile_coords(order, group, (n0, n1), t)
                if not (0 <= c[0] < n0 and 0 <= c[1] < n1):
                    return False, (f"on a {n0} x {n1} tile grid, tile {t} maps to {c}, "
                                   f"outside the grid")
                if c in seen:
                    return False, (f"on a {n0} x {n1} tile grid, tiles {seen[c]} and {t} "
                                   f"both map to {c}")
                seen[c] = t
    return True, (f"{order} order (group {group}): a bijection on every grid up to "
                  f"{GRID_LIMIT} x {GRID_LIMIT} tiles (enumerated)")
