"""Exact-mode shared memory: the tile image is the wgmma operand layout, TMA writes exactly
that image (TmaBox.smem_image per column block), descriptors read it back, and the bytes
really are swizzled."""

import numpy as np
import pytest

from argus.interp.machine import GlobalTensor, Machine, MemoryModelError
from argus.interp.machine.smem_image import (composed_table, operand_addresses, swizzled,
                                             tile_image, tma_image)
from argus.layout.hopper import smem_operand

TILES = [((64, 64), 2, "128B"), ((128, 64), 2, "128B"), ((64, 128), 2, "128B"),
         ((256, 64), 2, "128B"), ((64, 64), 2, "64B"), ((64, 32), 2, "32B"),
         ((64, 64), 2, "none"), ((64, 64), 4, "none"), ((64, 32), 4, "128B")]


SWIZZLED = [t for t in TILES if t[2] != "none"]


@pytest.mark.parametrize("shape,eb,swizzle", SWIZZLED)
def test_vectorised_tables_match_the_layout_objects(shape, eb, swizzle):
    operand = smem_operand(shape[0], shape[1], eb, "K", swizzle, 2048)
    table = composed_table(operand.layout, shape)
    for mn, k in [(0, 0), (1, 0), (7, 3), (9, shape[1] - 1), (shape[0] - 1, shape[1] // 2)]:
        assert table[mn, k] == operand.byte_offset(mn, k)
    assert np.array_equal(swizzled(swizzle, tile_image(2048, shape, eb, swizzle)), table)


@pytest.mark.parametrize("shape,eb,swizzle", TILES)
def test_tma_writes_the_tile_image(shape, eb, swizzle):
    image = swizzled(swizzle, tile_image(4096, shape, eb, swizzle))
    half = shape[0] // 2
    assert np.array_equal(tma_image(4096, shape, eb, swizzle, 0, shape[0]), image)
    assert np.array_equal(tma_image(4096, shape, eb, swizzle, half, shape[0]), image[half:])


def test_unswizzled_tiles_are_row_major_and_wgmma_cannot_read_them():
    pre = tile_image(1024, (64, 64), 2, "none")
    assert np.array_equal(pre, 1024 + 2 * np.arange(64 * 64).reshape(64, 64))
    with pytest.raises(MemoryModelError, match="no wgmma descriptor reads the K-major none"):
        operand_addresses(pre, "K", "none", 2)


@pytest.mark.parametrize("shape,eb,swizzle", [t for t in SWIZZLED if t[1] == 2])
def test_descriptors_read_the_image(shape, eb, swizzle):
    pre = tile_image(0, shape, eb, swizzle)
    image = swizzled(swizzle, pre)
    assert np.array_equal(operand_addresses(pre, "K", swizzle, eb), image)
    assert np.array_equal(operand_addresses(pre, "MN", swizzle, eb), image.T)
    band = pre[8:shape[0] // 2 + 8] if shape[0] >= 32 else pre
    assert np.array_equal(operand_addresses(band, "K", swizzle, eb), swizzled(swizzle, band))


def test_a_tile_no_descriptor_describes_is_refused():
    pre = tile_image(0, (64, 64), 2, "128B")[:, ::-1].copy()   # columns reversed
    with pytest.raises(MemoryModelError, match="wgmma cannot read|no wgmma descriptor reads"):
        operand_addresses(pre, "K", "128B", 2)


def test_exact_region_bytes_are_swizzled():
    m = Machine(exact=True)
    buf = m.smem.alloc("a", "bf16", (64, 64), stages=2, swizzle="128B")
    stage = buf.stage(1)
    values = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) % 251
    stage.store_codes(buf.dtype.encode(values))
    assert np.array_equal(buf.dtype.decode(stage.codes()), values)
    raw = m.smem.bytes[stage.lo:stage.hi].view(np.uint16).reshape(64, 64)
    # 128B swizzle: row 1's first 16-byte chunk moves to chunk 1 of the row
    assert np.array_equal(buf.dtype.decode(raw[1, 8:16]), values[1, 0:8])
    assert not np.array_equal(buf.dtype.decode(raw[1, 0:8]), values[1, 0:8])
    assert stage.intervals() == [(stage.lo, stage.hi)]


def test_interleaved_bands_do_not_overlap():
    m = Machine(exact=True)
    buf = m.smem.alloc("q", "bf16", (128, 128), stages=1, swizzle="128B")
    top, bottom = buf.stage(0).rows(0, 64), buf.stage(0).rows(64, 128)
    assert len(top.intervals()) == 2            # one run per 64-column block
    spans = [set(range(lo, hi)) for lo, hi in top.intervals()]
    for lo, hi in bottom.intervals():
        assert all(not (s & set(range(lo, hi))) for s in spans)


@pytest.mark.parametrize("shape", [(64, 128), (4, 64)])   # (4, 64): not whole atoms
def test_tma_load_lands_swizzled_and_reads_back(shape):
    m = Machine(seed=1, exact=True)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    src = GlobalTensor.from_values("X", x, "bf16")
    buf = m.smem.alloc("x", "bf16", shape, stages=1, swizzle="128B")
    full = m.mbarrier("full", count=1)
    got = {}

    def agent():
        yield m.arrive(full, expect_tx=buf.stage_bytes)
        yield m.tma_load(src, (0, 0), buf.stage(0), full)
        yield m.wait(full, 0)
        got["x"] = yield m.ld_shared(buf.stage(0))

    m.spawn("p", agent())
    assert m.run().ok
    assert np.array_equal(got["x"], src.values())

