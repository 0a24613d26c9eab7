"""The epilogue and split-K halves of the bug corpus (examples/bugs/gemm_epilogue/,
examples/bugs/gemm_splitk/): each bug is reported by the tag pass at the line its
docstring names, with a counterexample, and the interpreter confirms it: run at the
counterexample's sizes (and block), the kernel gives a wrong answer at the element the
finding names, or reports the shared-memory race on the rows it names, or (for races
between work items) gives different answers when the two racing blocks run in the two
orders a GPU may run them in."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_file
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from argus.ir.schedule import tile_coords
from argus.verify.tags import check

ROOT = Path(__file__).resolve().parents[3] / "examples" / "bugs"
EPILOGUE, SPLITK = ROOT / "gemm_epilogue", ROOT / "gemm_splitk"
FILES = sorted([*EPILOGUE.glob("*.py"), *SPLITK.glob("*.py")])
TOL = 2 ** -7


def expected(path: Path) -> tuple[str, int]:
    m = re.search(r"Expected: (\S+) at line (\d+)\.", path.read_text())
    assert m, f"{path.name}: the docstring must say 'Expected: <check> at line <n>.'"
    return m.group(1), int(m.group(2))


@lru_cache(maxsize=None)
def analysed(path: Path):
    kernel = parse_file(path)["gemm"]
    return kernel, tuple(check(kernel))


def finding(path: Path):
    want, line = expected(path)
    _, findings = analysed(path)
    hits = [f for f in findings if f.check == want and f.loc.line == line]
    assert hits, f"{path.name}: no {want} at line {line}; got " + "; ".join(
        f"{f.check}@{f.loc.line}" for f in findings)
    return hits[0]


def test_the_corpus_has_a_bug_for_every_new_check():
    checks = {expected(p)[0] for p in FILES}
    assert {"tag.smem-race", "tag.smem-unwritten", "tag.store-coordinate", "tag.store-race",
            "tag.k-coverage", "tag.store-coverage"} <= checks
    assert len(list(EPILOGUE.glob("*.py"))) >= 6 and len(list(SPLITK.glob("*.py"))) >= 5


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_bug_is_reported_at_its_line_with_a_counterexample(path):
    f = finding(path)
    assert f.severity == "error"
    assert f.loc.file.endswith(path.name)
    cex = f.counterexample
    assert cex is not None and cex.sizes and cex.elements
    assert f.hint and "Traceback" not in f.message


def run(path: Path, sizes, blocks=None, seed: int = 0, **overrides):
    """The bug kernel on random bf16 inputs: (result, output, fp32 reference)."""
    kernel = parse_file(path, overrides or None)["gemm"]
    m, n, k = (sizes[s] for s in ("M", "N", "K"))
    rng = np.random.default_rng(7)
    a = round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((n, k)).astype(np.float32))
    if path.parent == SPLITK:
        out, init = "W", np.zeros((m, n), np.float32)            # W starts at zero
    else:
        out, init = "C", np.full((m, n), np.nan, np.float32)     # every element must be written
    res = interpret(kernel, {"A": a, "B": b, out: init}, seed=seed, blocks=blocks)
    return res, res.outputs[out], a @ b.T


def wrong(out, ref, idx) -> bool:
    scale = np.abs(ref).max()
    return bool(np.isnan(out[idx]) or abs(out[idx] - ref[idx]) > TOL * scale)


def named(cex, tensor):
    (e,) = [e for e in cex.elements if e.tensor == tensor]
    return e


def blocks_of(cex):
    return list(cex.block) if cex.block else None


# -- the epilogue through shared memory and a TMA store ---------------------------------------
def test_smem_race_the_interpreter_sees_both_warpgroups_write_the_rows_named():
    path = EPILOGUE / "smem_rows_second_warpgroup.py"
    f = finding(path)
    cex = f.counterexample
    (e,) = cex.elements
    row = e.index[0]
    assert row < 64 and e.actual["second writer"]["warpgroup"] != cex.warpgroup
    assert cex.thread is not None and cex.register is not None and cex.smem_byte is not None
    sizes = {**cex.sizes, "M": 128}                 # room for the rows nobody writes
    res, out, ref = run(path, sizes, blocks_of(cex))
    text = " ".join(res.failures())
    assert "race on c_s" in text and "rows 0..64" in text and "wg1" in text and "wg2" in text
    col = e.index[1]
    assert out[64 + row, col] == 0 and wrong(out, ref, (64 + row, col))


def test_copy_before_store_reads_the_previous_tile():
    path = EPILOGUE / "copy_before_store.py"
    f = finding(path)
    assert "after this TMA store" in f.message
    cex = f.counterexample
    idx = named(cex, "C").index
    res, out, ref = run(path, cex.sizes, blocks_of(cex))
    assert wrong(out, ref, idx) and out[idx] == 0       # a block's first tile: zeros
    # one block walking two tiles: the second tile gets the first tile's values
    res, out, ref = run(path, {"M": 256, "N": 8, "K": 8}, BLOCKS=1)
    atol = TOL * np.abs(ref).max()
    np.testing.assert_allclose(out[128:129, :8], ref[0:1, :8], rtol=TOL, atol=atol)
    assert wrong(out, ref, (128, 0))


def test_a_copy_not_ordered_after_the_stores_races_with_them():
    path = EPILOGUE / "no_barrier_before_copy.py"
    f = finding(path)
    assert "not ordered before the copy" in f.message and "named_barrier" in f.hint
    cex = f.counterexample
    res, out, ref = run(path, cex.sizes, blocks_of(cex))
    text = " ".join(res.failures())
    # the machine model runs a warpgroup as one agent, so it sees the other warpgroup's
    # stores race with the copy (the finding's minimal element is the issuing
    # warpgroup's own: its other warps are not waited for either)
    assert "race on c_s" in text and "st.shared" in text and "TMA store" in text


def test_wrong_tma_tile_lands_the_product_tile_named_at_the_element_named():
    f = finding(EPILOGUE / "wrong_tma_tile.py")
    cex = f.counterexample
    e = named(cex, "C")
    dst, came_from = e.index, (e.actual["row"], e.actual["col"])
    assert dst != came_from and (e.expected["row"], e.expected["col"]) == dst
    res, out, ref = run(EPILOGUE / "wrong_tma_tile.py", cex.sizes, blocks_of(cex))
    assert wrong(out, ref, dst)
    np.testing.assert_allclose(out[dst], ref[came_from], rtol=TOL, atol=TOL * np.abs(ref).max())


def test_band_copies_race_on_the_element_named():
    path = EPILOGUE / "band_copies_same_rows.py"
    f = finding(path)
    cex = f.counterexample
    (e,) = cex.elements
    other = e.actual["second writer"]
    assert {cex.warpgroup, other["warpgroup"]} == {1, 2}
    res, out, ref = run(path, cex.sizes, blocks_of(cex))
    row, col = e.index
    assert wrong(out, ref, (row, col))
    # whichever copy landed last holds the element: rows row and row + 64 of the product
    atol = TOL * np.abs(ref).max()
    assert any(abs(out[row, col] - (ref[r, col] if r < ref.shape[0] else 0)) <= atol
               for r in (row, row + 64))
    res, out, ref = run(path, {**cex.sizes, "M": 128}, blocks_of(cex))
    assert np.isnan(out[64:, :]).all()                   # the second half is never copied


def test_k_tail_misses_k_at_the_element_named():
    f = finding(EPILOGUE / "k_tail.py")
    cex = f.counterexample
    assert cex.sizes["K"] % 64 != 0
    e = named(cex, "C")
    assert e.actual["times accumulated"] == 0 and e.actual["k"] >= cex.sizes["K"] // 64 * 64
    res, out, ref = run(EPILOGUE / "k_tail.py", cex.sizes, blocks_of(cex))
    assert res.ok and wrong(out, ref, e.index)
    # the sum over the k that were accumulated is what C holds
    m, n, k = (cex.sizes[s] for s in "MNK")
    res2, out2, ref2 = run(EPILOGUE / "k_tail.py", {**cex.sizes, "K": k // 64 * 64 or 64})
    assert not wrong(out2, ref2, e.index)


def test_tail_tiles_are_never_written():
    f = finding(EPILOGUE / "tail_tiles_unwritten.py")
    cex = f.counterexample
    assert cex.sizes["M"] % 128 != 0
    e = named(cex, "C")
    res, out, ref = run(EPILOGUE / "tail_tiles_unwritten.py", cex.sizes)
    assert np.isnan(out[e.index])
    full = cex.sizes["M"] // 128 * 128
    np.testing.assert_allclose(out[:full], ref[:full], rtol=TOL, atol=TOL * np.abs(ref).max())


# -- split-K with atomic adds ------------------------------------------------------------------
def test_split_overlap_adds_a_k_twice():
    path = SPLITK / "split_overlap.py"
    f = finding(path)
    assert "twice" in f.message
    cex = f.counterexample
    e = named(cex, "W")
    second = e.actual["second adder"]
    assert second["ks"] != cex.iteration["ks"] and e.actual["times accumulated"] == 2
    res, out, ref = run(path, cex.sizes)                 # every work item
    assert res.ok and wrong(out, ref, e.index)


def test_split_gap_never_adds_a_k():
    path = SPLITK / "split_gap.py"
    f = finding(path)
    assert "never accumulated" in f.message
    cex = f.counterexample
    e = named(cex, "W")
    kt = -(-cex.sizes["K"] // 64)
    assert kt % 4 != 0 and e.actual["k"] >= kt // 4 * 4 * 64
    res, out, ref = run(path, cex.sizes)
    assert res.ok and wrong(out, ref, e.index)


def racing_blocks(path: Path, cex, second) -> tuple[int, int]:
    """The blocks of the two racing work items (row-major over (SPLIT, tiles_m, tiles_n))."""
    kernel, _ = analysed(path)
    m, n = cex.sizes["M"], cex.sizes["N"]
    extents = (kernel.constants["SPLIT"], -(-m // 128), -(-n // 256))
    want = (second["ks"], second["tm"], second["tn"])
    t = next(t for t in range(np.prod(extents)) if tuple(tile_coords("row_major", 1, extents,
                                                                      t)) == want)
    return cex.block[0], t % 132


@pytest.mark.parametrize("name", ["first_split_stores", "plain_store"])
def test_store_races_give_an_answer_that_depends_on_the_block_order(name):
    path = SPLITK / f"{name}.py"
    f = finding(path)
    cex = f.counterexample
    e = named(cex, "W")
    first, second = racing_blocks(path, cex, e.actual["second writer"])
    assert first != second
    outs = []
    for order in ([first, second], [second, first]):
        res, out, ref = run(path, cex.sizes, order)
        outs.append(out[e.index])
    assert outs[0] != outs[1]
    assert any(abs(o - ref[e.index]) > TOL * np.abs(ref).max() for o in outs)


def test_adds_into_the_wrong_rows_are_caught_without_a_tag_assert():
    path = SPLITK / "add_rows_without_warpgroup.py"
    f = finding(path)
    cex = f.counterexample
    e = named(cex, "W")
    assert e.actual["row"] != e.expected["row"] and cex.thread is not None
    res, out, ref = run(path, cex.sizes)
    assert res.ok and wrong(out, ref, e.index)
    # the rows of the second warpgroup were added onto the first's
    row, col = e.index
    np.testing.assert_allclose(out[row, col], ref[row, col] + ref[e.actual["row"], col],
                               rtol=1e-4, atol=1e-4)
