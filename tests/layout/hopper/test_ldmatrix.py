import pytest

from argus.layout.hopper import TVLayoutError, ldmatrix, row_address_lane, stmatrix
from argus.layout.hopper.ldmatrix import address_lanes

from . import ptx_oracles as ptx


@pytest.mark.parametrize("build", [ldmatrix, stmatrix])
@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_fragment_matches_ptx(build, num, trans):
    tv = build(num, trans)
    assert tv.tile == (8 * num, 8) and tv.threads == 32 and tv.values == 2 * num
    for lane in range(32):
        for v in range(2 * num):
            matrix, r, c = ptx.ldmatrix_element(lane, v, trans)
            assert tv.coord(lane, v) == (8 * matrix + r, c), (lane, v)
    tv.owner_table()


def test_names():
    assert ldmatrix(4, True).name == "ldmatrix_x4_trans"
    assert stmatrix(2).name == "stmatrix_x2"


def test_row_addresses_come_from_lanes_8i_plus_r():
    assert [row_address_lane(i, r, 4) for i in range(4) for r in range(8)] == list(range(32))
    assert address_lanes(2) == list(range(16))
    with pytest.raises(TVLayoutError, match="does not exist"):
        row_address_lane(2, 0, 2)


def test_bad_count_is_rejected():
    with pytest.raises(TVLayoutError, match=r"\.x1, \.x2 or \.x4"):
        ldmatrix(3)


def test_stmatrix_8x8_blocks_match_the_accumulator():
    """stmatrix.x4 of a warp's accumulator: register i (two halves) = the D values 2i, 2i+1."""
    from argus.layout.hopper import wgmma_accumulator
    acc, st = wgmma_accumulator(16), stmatrix(4)
    for lane in range(32):
        for v in range(8):
            row, col = acc.coord(lane, v)  # warp 0: rows 0..15, columns 0..15
            m, c = st.coord(lane, v)
            block = m // 8  # matrix i = (row block, column block), column-major over blocks
            assert (row % 8, col % 8) == (m % 8, c)
            assert (row // 8, col // 8) == (block % 2, block // 2)
