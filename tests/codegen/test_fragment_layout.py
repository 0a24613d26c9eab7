"""The row/column split of each accumulator layout reproduces the layout's (t, v) -> (row,
col) table (split_layout checks every (t, v) itself; this pins its shape), and the pairs the
epilogue packs into 32-bit stores are adjacent columns."""

import pytest

from argus.codegen.fragment_layout import split_layout
from argus.layout.hopper import ACCUMULATOR_NS, get_atom


@pytest.mark.parametrize("n", ACCUMULATOR_NS)
def test_accumulator_split(n):
    split = split_layout(f"wgmma_acc_m64n{n}")
    assert split.pairs_adjacent()
    rows, cols = get_atom(f"wgmma_acc_m64n{n}").coord_table()
    for v in range(0, n // 2, 2):
        r, c = split.value_row_col(v)
        assert (rows[0, v], cols[0, v]) == (r, c)
        assert (rows[0, v + 1], cols[0, v + 1]) == (r, c + 1)


def test_thread_part_is_c():
    row, col = split_layout("wgmma_acc_m64n64").thread_row_col("t")
    t = 37
    want_row, want_col = get_atom("wgmma_acc_m64n64").coord(t, 0)
    assert eval(row.replace("/", "//"), {"t": t}) == want_row
    assert eval(col.replace("/", "//"), {"t": t}) == want_col


def test_unknown_layout_is_refused_by_name():
    from argus.layout.hopper.tv import TVLayoutError
    with pytest.raises(TVLayoutError, match="unknown atom 'rows"):
        split_layout("rows(wgmma_acc_m64n64)")   # lower_block turns it into a CodegenError
