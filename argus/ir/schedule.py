"""What a persistent tile schedule means: which tile a block visits at its i-th step.

The user picks the order; this mapping is what the compiler derives from it, shared by
the interpreter and the code generator so that both visit the same tiles. Block b's i-th
tile is linear tile t = b + i * num_blocks (while t < number of tiles), mapped by order
(b is the block's linear index, x fastest: x + gx * (y + gy * z); num_blocks gx * gy * gz):
  row_major  t -> coordinates in row-major order over the extents;
  grouped    (2-D) bands of `group` rows; inside a band, down the rows first, then across
             columns (the GROUP_M raster: neighbouring blocks share B tiles in L2);
  swizzled   (2-D) bands of `group` columns; inside a band across the columns first,
             then down the rows, bands alternating direction (serpentine).
"""

from __future__ import annotations

from typing import Iterator

ORDERS = ("row_major", "grouped", "swizzled")


def tile_coords(order: str, group: int, extents: tuple[int, ...], t: int) -> tuple[int, ...]:
    total = 1
    for e in extents:
        total *= e
    if not 0 <= t < total:
        raise ValueError(f"tile {t} is outside a grid of {total} tiles")
    if order == "row_major":
        coords = []
        for e in reversed(extents):
            coords.append(t % e)
            t //= e
        return tuple(reversed(coords))
    if len(extents) != 2:
        raise ValueError(f"order {order!r} needs a 2-D tile grid, got {len(extents)}-D")
    n0, n1 = extents
    if order == "grouped":
        band, within = divmod(t, group * n1)
        first = band * group
        rows = min(group, n0 - first)
        return first + within % rows, within // rows
    if order == "swizzled":
        band, within = divmod(t, group * n0)
        first = band * group
        cols = min(group, n1 - first)
        row, col = divmod(within, cols)
        if band % 2:
            row = n0 - 1 - row
        return row, first + col
    raise ValueError(f"unknown order {order!r}; one of {', '.join(ORDERS)}")


def block_tiles(order: str, group: int, extents: tuple[int, ...], block: int,
                num_blocks: int) -> Iterator[tuple[int, ...]]:
    """(i, *coords) for each tile block `block` of `num_blocks` visits, in order."""
    total = 1
    for e in extents:
        total *= e
    i, t = 0, block
    while t < total:
        yield (i, *tile_coords(order, group, extents, t))
        i, t = i + 1, t + num_blocks
