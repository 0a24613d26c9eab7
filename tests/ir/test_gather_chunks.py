"""argus.ir.gather_chunks, the op's definition of who copies what in a warpgroup's row gather:
every chunk of the tile exactly once, each warp only its own rows (the indices it reads),
each copy instruction of a warp whole rows (coalesced global reads), and the shapes it
refuses with their reason."""

import pytest

from argus.ir import gather_chunks as gc


@pytest.mark.parametrize("rows, row_bytes", [(128, 128), (64, 128), (128, 256), (64, 64),
                                             (128, 64), (32, 256)])
def test_every_chunk_is_copied_once_by_a_thread_of_its_warp(rows, row_bytes):
    assert gc.problem(rows, row_bytes) is None
    n = gc.copies_per_thread(rows, row_bytes)
    seen = {}
    for t in range(128):
        for i in range(n):
            r, c = gc.chunk_of(t, i, rows, row_bytes)
            assert (r, c) not in seen
            seen[(r, c)] = t
            assert r in gc.rows_of_warp(t // 32, rows)
    assert set(seen) == {(r, c) for r in range(rows) for c in range(row_bytes // 16)}


def test_one_copy_instruction_of_a_warp_reads_four_whole_rows():
    """BK = 64 bf16: 128-byte rows, 8 chunks; copy i of warp w is rows 32w + 4i .. + 3."""
    for w in range(4):
        for i in range(8):
            got = {gc.chunk_of(32 * w + lane, i, 128, 128) for lane in range(32)}
            rows = range(32 * w + 4 * i, 32 * w + 4 * i + 4)
            assert got == {(r, c) for r in rows for c in range(8)}


@pytest.mark.parametrize("rows, row_bytes, words", [
    (128, 120, "not a whole number of 16-byte"), (256, 128, "at most 32 rows a warp"),
    (6, 128, "a multiple of 4"), (4, 16, "not a multiple of the warpgroup's 128 threads")])
def test_shapes_it_cannot_gather_say_why(rows, row_bytes, words):
    assert words in gc.problem(rows, row_bytes)
