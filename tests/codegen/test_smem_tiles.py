"""The shared-memory tile convention (column chunks of the swizzle span) read through the
wgmma descriptor model (argus.layout.hopper.descriptor.read_layout) gives back exactly the
byte the TMA chunk convention stored each element at, for every k16 slice: the descriptor
lowering and the TMA lowering agree, K-major and MN-major, one chunk or several."""

import pytest

from argus.codegen.errors import CodegenError
from argus.codegen.smem_tiles import as_operand, stage_geometry
from argus.layout.hopper.descriptor import descriptor_for, read_layout
from argus.layout.hopper.tma import TmaBox


@pytest.mark.parametrize("shape,major", [((64, 256), "MN"), ((64, 128), "MN"), ((64, 64), "MN"),
                                         ((128, 64), "K"), ((256, 64), "K"), ((128, 128), "K"),
                                         ((64, 64), "K")])
def test_descriptor_reads_what_tma_wrote(shape, major):
    g = stage_geometry(shape, 2, "128B")
    op = as_operand(g, major)
    for k0 in range(0, op.k, 16):
        desc = descriptor_for(op, k0)
        read = read_layout(desc, 2, major, op.mn)
        for mn in range(op.mn):
            for kk in range(16):
                r, c = (mn, k0 + kk) if major == "K" else (k0 + kk, mn)
                want = (c // g.chunk_cols) * g.chunk_stride + r * g.span + (c % g.chunk_cols) * 2
                swizzled_want = op.layout((mn, k0 + kk))
                assert read((mn, kk)) == swizzled_want
                assert op.unswizzled_offset(mn, k0 + kk) == want


def test_chunk_is_the_tma_box_image():
    g = stage_geometry((128, 64), 2, "128B")
    op = as_operand(g, "K")
    image = TmaBox(2, (4096, 4096), (2, 8192), (64, 128), "128B").smem_image()
    for r in range(128):
        for c in range(64):
            assert op.byte_offset(r, c) == image((c, r))


def test_row_band_keeps_the_chunk_stride():
    g = stage_geometry((128, 128), 2, "128B")
    band = g.band(64, 64)
    assert band.chunk_stride == g.chunk_stride == 128 * 128
    assert band.byte_offset(0, 64) == 128 * 128 + 64 * 128


def test_tile_not_a_whole_number_of_swizzle_rows_is_refused():
    with pytest.raises(CodegenError, match="multiple of 64"):
        stage_geometry((128, 96), 2, "128B")
