"""Thread-value tables of exact mode: atoms repeated over larger tiles, row vectors, the
blocked layout, and which conversions stay inside each thread."""

import numpy as np
import pytest

from argus.interp.exact.fraglayout import frag_layout
from argus.layout.hopper import atom_names, get_atom


def test_m64n64_repeated_over_64x128_is_the_m64n128_accumulator():
    tiled = frag_layout("wgmma_acc_m64n64", (64, 128))
    atom_rows, atom_cols = get_atom("wgmma_acc_m64n128").coord_table()
    assert np.array_equal(tiled.rows, atom_rows) and np.array_equal(tiled.cols, atom_cols)


@pytest.mark.parametrize("name", [n for n in atom_names()
                                  if not n.startswith("wgmma_acc") or n.endswith("n64")])
def test_every_atom_round_trips_a_tile(name):
    tile = get_atom(name).tile
    shape = (tile[0] * 2, tile[1] * 2)
    layout = frag_layout(name, shape)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    regs = layout.from_logical(x)
    assert regs.shape == (layout.threads, 4 * get_atom(name).values)
    assert np.array_equal(layout.to_logical(regs), x)


def test_16bit_register_a_is_the_accumulator_registers_in_order():
    acc = frag_layout("wgmma_acc_m64n64", (64, 64))
    a = frag_layout("wgmma_a_rs_16bit", (64, 64))
    slots = a.thread_slots(acc)
    assert np.array_equal(slots, np.tile(np.arange(32), (128, 1)))


def test_8bit_register_a_needs_other_threads_registers():
    acc = frag_layout("wgmma_acc_m64n64", (64, 64))
    a = frag_layout("wgmma_a_rs_8bit", (64, 64))
    assert (a.thread_slots(acc) < 0).any()


def test_rows_of_the_accumulator_are_held_by_a_quad():
    rows = frag_layout("rows(wgmma_acc_m64n64)", (64,))
    assert rows.values == 2
    lane, warp = np.arange(128) % 32, np.arange(128) // 32
    assert np.array_equal(rows.rows[:, 0], warp * 16 + lane // 4)
    assert np.array_equal(rows.rows[:, 1], warp * 16 + lane // 4 + 8)
    holders = np.bincount(rows.rows.ravel(), minlength=64)
    assert (holders == 4).all()
    acc = frag_layout("wgmma_acc_m64n128", (64, 128))
    assert (acc.row_slots(rows) >= 0).all()


def test_blocked_deals_vectors_cyclically_and_owns_each_once():
    layout = frag_layout("blocked", (64, 64))
    assert (layout.threads, layout.values) == (128, 32)
    # vectors of 8 row neighbours: thread 5 holds vectors 5, 133, ...; register 9 is entry 1
    # of its second vector, element 133 * 8 + 1
    assert (layout.rows[5, 9], layout.cols[5, 9]) == divmod(133 * 8 + 1, 64)
    assert list(layout.cols[5, :8]) == list(range(40, 48)) and set(layout.rows[5, :8]) == {0}
    owners = np.bincount((layout.rows * 64 + layout.cols).ravel(), minlength=64 * 64)
    assert (owners == 1).all()
    # a 1-D vector of 64: 64 threads one register each (vectors would idle threads)
    assert frag_layout("blocked", (64,)).rows.shape == (64, 1)
    # rows 24 wide: vectors of 2 keep 128 threads busy where 8 or 4 would not
    assert frag_layout("blocked", (96, 24)).rows.shape == (128, 18)


def test_replicated_rows_read_the_first_holder():
    rows = frag_layout("rows(wgmma_acc_m64n64)", (64,))
    regs = rows.from_logical(np.arange(64, dtype=np.float32))
    regs[0, 0] = -1.0           # thread 0 disagrees with threads 1..3 on row 0
    assert rows.to_logical(regs)[0] == -1.0


def test_unknown_layout_and_bad_shape_are_refused():
    with pytest.raises(ValueError, match="no thread-value table"):
        frag_layout("swizzled_nonsense", (64, 64))
    with pytest.raises(ValueError, match="not a multiple"):
        frag_layout("wgmma_acc_m64n64", (64, 96))
