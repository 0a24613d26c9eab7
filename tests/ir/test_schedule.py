"""Tile schedules: every order visits every tile exactly once, with the documented raster."""

import pytest

from argus.ir.schedule import block_tiles, tile_coords


@pytest.mark.parametrize("order", ["row_major", "grouped", "swizzled"])
@pytest.mark.parametrize("extents,group", [((5, 7), 3), ((8, 8), 8), ((1, 4), 2), ((6, 2), 4)])
def test_orders_are_bijections(order, extents, group):
    n = extents[0] * extents[1]
    seen = {tile_coords(order, group, extents, t) for t in range(n)}
    assert seen == {(a, b) for a in range(extents[0]) for b in range(extents[1])}


def test_grouped_walks_down_a_band_first():
    # 4 x 3 grid in bands of 2 rows: (0,0) (1,0) (0,1) (1,1) (0,2) (1,2) then rows 2-3.
    got = [tile_coords("grouped", 2, (4, 3), t) for t in range(8)]
    assert got == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 0), (3, 0)]


def test_swizzled_serpentine_bands():
    got = [tile_coords("swizzled", 2, (3, 4), t) for t in range(12)]
    assert got[:6] == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
    assert got[6:8] == [(2, 2), (2, 3)]   # the second band comes back up


def test_blocks_partition_the_tiles():
    tiles = [c for b in range(3) for (_, *c) in block_tiles("grouped", 2, (4, 5), b, 3)]
    assert sorted(map(tuple, tiles)) == [(a, b) for a in range(4) for b in range(5)]
    assert [i for i, *_ in block_tiles("row_major", 1, (4, 5), 1, 3)] == list(range(7))


def test_errors():
    with pytest.raises(ValueError, match="2-D"):
        tile_coords("grouped", 2, (2, 2, 2), 0)
    with pytest.raises(ValueError, match="outside"):
        tile_coords("row_major", 1, (2, 2), 4)
