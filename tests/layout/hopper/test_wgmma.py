import numpy as np
import pytest

from argus.layout.hopper import (ACCUMULATOR_NS, TVLayoutError,
                                 accumulator_slice_is_register_a, wgmma_a_registers,
                                 wgmma_accumulator)

from . import ptx_oracles as ptx


@pytest.mark.parametrize("n", ACCUMULATOR_NS)
def test_accumulator_matches_ptx_fragment(n):
    acc = wgmma_accumulator(n)
    assert acc.tile == (64, n) and acc.threads == 128 and acc.values == n // 2
    t, v = np.meshgrid(np.arange(128), np.arange(n // 2), indexing="ij")
    rows, cols = acc.coord_table()
    want_rows, want_cols = ptx.wgmma_accumulator(t, v)
    assert (rows == want_rows).all() and (cols == want_cols).all()


@pytest.mark.parametrize("n", [8, 24, 64])
def test_accumulator_coord_matches_ptx_fragment(n):
    acc = wgmma_accumulator(n)
    for t in range(128):
        for v in range(n // 2):
            assert acc.coord(t, v) == ptx.wgmma_accumulator(t, v), (t, v)


@pytest.mark.parametrize("n", ACCUMULATOR_NS)
def test_accumulator_owner_table_is_a_bijection(n):
    threads, values = wgmma_accumulator(n).owner_table()
    assert threads.shape == (64, n)
    for m, c in [(0, 0), (63, n - 1), (9, 3)]:
        assert ptx.wgmma_accumulator(int(threads[m, c]), int(values[m, c])) == (m, c)


def test_register_a_16bit_matches_ptx_fragment():
    a = wgmma_a_registers(2)
    assert (a.tile, a.values, a.name) == ((64, 16), 8, "wgmma_a_rs_16bit")
    for t in range(128):
        for v in range(8):
            assert a.coord(t, v) == ptx.wgmma_a_16bit(t, v)
    a.owner_table()


def test_register_a_8bit_matches_ptx_fragment():
    a = wgmma_a_registers(1)
    assert (a.tile, a.values, a.name) == ((64, 32), 16, "wgmma_a_rs_8bit")
    for t in range(128):
        for v in range(16):
            assert a.coord(t, v) == ptx.wgmma_a_8bit(t, v)
    a.owner_table()


@pytest.mark.parametrize("n", [8, 24, 96])
def test_accumulator_equals_pycute_cute_form(n):
    pycute = pytest.importorskip("pycute")
    ref = pycute.Layout(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512)))
    acc = wgmma_accumulator(n)
    for t in range(128):
        for v in range(n // 2):
            assert acc.index(t, v) == ref((t, v))


def test_register_a_16bit_equals_pycute_cute_form():
    pycute = pytest.importorskip("pycute")
    ref = pycute.Layout(((4, 8, 4), (2, 2, 2)), ((128, 1, 16), (64, 8, 512)))
    a = wgmma_a_registers(2)
    assert all(a.index(t, v) == ref((t, v)) for t in range(128) for v in range(8))


def test_accumulator_slice_is_register_a_for_16bit():
    assert accumulator_slice_is_register_a(2)
    # and, by the oracles directly: columns 16j.. of D are A's k for 16-bit types
    for j in range(4):
        for t in range(128):
            for v in range(8):
                row, col = ptx.wgmma_accumulator(t, 8 * j + v)
                assert (row, col - 16 * j) == ptx.wgmma_a_16bit(t, v)


def test_accumulator_slice_is_not_register_a_for_8bit():
    assert not accumulator_slice_is_register_a(1)
    mismatches = sum(
        (ptx.wgmma_accumulator(t, 16 * j + v)[0], ptx.wgmma_accumulator(t, 16 * j + v)[1] - 32 * j)
        != ptx.wgmma_a_8bit(t, v) for j in range(2) for t in range(128) for v in range(16))
    assert mismatches > 0


def test_accumulator_slice_check_needs_whole_blocks():
    with pytest.raises(TVLayoutError, match="multiple"):
        accumulator_slice_is_register_a(2, n=24)


@pytest.mark.parametrize("n", [0, 4, 12, 264])
def test_bad_n_is_rejected(n):
    with pytest.raises(TVLayoutError, match="multiple of 8"):
        wgmma_accumulator(n)


def test_register_a_rejects_tf32():
    with pytest.raises(TVLayoutError, match="shared memory"):
        wgmma_a_registers(4)


def test_coord_rejects_out_of_range():
    with pytest.raises(TVLayoutError, match="outside"):
        wgmma_accumulator(8).coord(128, 0)


def test_register_a_8bit_equals_pycute_cute_form():
    """CuTe's register-source layout for 8-bit A (GMMA ALayout_64x32), evaluated by pycute."""
    pycute = pytest.importorskip("pycute")
    ref = pycute.Layout(((4, 8, 4), (4, 2, 2)), ((256, 1, 16), (64, 8, 1024)))
    index = wgmma_a_registers(1).index_table()
    assert all(index[t, v] == ref((t, v)) for t in range(128) for v in range(16))
