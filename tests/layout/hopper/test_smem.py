import pytest

from argus.layout.hopper import SmemLayoutError, smem_operand

from . import ptx_oracles as ptx

MODES = ["none", "32B", "64B", "128B"]


@pytest.mark.parametrize("swizzle", MODES)
@pytest.mark.parametrize("element_bytes", [1, 2, 4])
def test_k_major_matches_oracle(swizzle, element_bytes):
    mn, k = 16, 256 // element_bytes  # two 8-row groups, k across atoms
    op = smem_operand(mn, k, element_bytes, "K", swizzle, base=3072)
    assert op.layout.unit == "byte"
    got = [op.byte_offset(m, kk) for m in range(mn) for kk in range(k)]
    want = [ptx.smem_k_major_byte(m, kk, mn, element_bytes, swizzle, base=3072)
            for m in range(mn) for kk in range(k)]
    assert got == want


@pytest.mark.parametrize("swizzle", MODES)
def test_mn_major_matches_oracle(swizzle):
    mn, k = 128, 32
    op = smem_operand(mn, k, 2, "MN", swizzle, base=1024)
    got = [op.byte_offset(m, kk) for m in range(mn) for kk in range(k)]
    want = [ptx.smem_mn_major_byte(m, kk, k, mn, 2, swizzle, base=1024)
            for m in range(mn) for kk in range(k)]
    assert got == want


@pytest.mark.parametrize("major", ["K", "MN"])
@pytest.mark.parametrize("swizzle", MODES)
def test_tile_fills_its_bytes_exactly_once(major, swizzle):
    op = smem_operand(64, 64, 2, major, swizzle)
    offsets = sorted(op.byte_offset(m, k) for m in range(64) for k in range(64))
    assert offsets == list(range(0, 64 * 64 * 2, 2))


def test_sw128_rows_of_a_16_byte_column_hit_distinct_banks():
    """8 rows reading the same k chunk (an ldmatrix phase) touch 8 distinct 16-byte bank groups."""
    for swizzle in MODES:
        op = smem_operand(64, 64, 2, "K", swizzle)
        groups = {(op.byte_offset(m, 0) % 128) // 16 for m in range(8)}
        assert len(groups) == 8, swizzle
    # the dense unswizzled row-major 128-byte-wide tile would be the bad case
    op = smem_operand(64, 64, 2, "K", "128B")
    assert len({(op.unswizzled_offset(m, 0) % 128) // 16 for m in range(8)}) == 1


def test_8bit_mn_major_is_rejected():
    with pytest.raises(SmemLayoutError, match="must be K-major"):
        smem_operand(64, 64, 1, "MN", "128B")


@pytest.mark.parametrize("mn,k,major,msg", [
    (60, 64, "K", "MN a multiple of 8"),
    (64, 48, "K", "K a multiple of 64"),
    (32, 64, "MN", "MN a multiple of 64"),
])
def test_tiling_must_be_whole_atoms(mn, k, major, msg):
    with pytest.raises(SmemLayoutError, match=msg):
        smem_operand(mn, k, 2, major, "128B")


def test_bad_major_and_swizzle():
    with pytest.raises(SmemLayoutError, match="'K' or 'MN'"):
        smem_operand(64, 64, 2, "M", "128B")
    with pytest.raises(SmemLayoutError, match="unknown swizzle"):
        smem_operand(64, 64, 2, "K", "256B")
