"""The tag half of the GEMM bug corpus (examples/bugs/gemm/): each bug is reported by the
tag pass at the line its docstring names, with a counterexample, and the interpreter run
at the counterexample's sizes (and block) gives a wrong answer at the element it names.

The swizzle bug is confirmed twice: by evaluating the TMA box image and the wgmma
descriptor on concrete ints (no z3: the byte the descriptor reads holds the element the
finding says), and by the interpreter's fragment-exact mode, which keeps shared memory as
bytes and faults at the wgmma that cannot read the unswizzled tile (value mode cannot
tell)."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_kernel
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from argus.verify.tags import check

BUGS = Path(__file__).resolve().parents[3] / "examples" / "bugs" / "gemm"
NAMES = sorted(p.stem for p in BUGS.glob("*.py"))
TOL = 2 ** -7


def expected(name: str) -> tuple[str, int]:
    doc = (BUGS / f"{name}.py").read_text()
    m = re.search(r"Expected: (\S+) at line (\d+)\.", doc)
    assert m, f"{name}.py: the docstring must say 'Expected: <check> at line <n>.'"
    return m.group(1), int(m.group(2))


@lru_cache(maxsize=None)
def analysed(name: str):
    kernel = parse_kernel(BUGS / f"{name}.py", "gemm")
    return kernel, check(kernel)


def finding(name: str):
    want, line = expected(name)
    _, findings = analysed(name)
    hits = [f for f in findings if f.check == want and f.loc.line == line]
    assert hits, f"{name}: no {want} at line {line}; got " + "; ".join(
        f"{f.check}@{f.loc.line}" for f in findings)
    return hits[0]


def test_the_corpus_has_the_eight_tag_bugs():
    assert NAMES == ["k_steps_skipped", "same_rows", "swapped_major", "tail_tile",
                     "wrong_k_offset", "wrong_stage", "wrong_store_coords", "wrong_swizzle"]


def test_interpreter_confirms_the_skipped_k_steps():
    """The k the finding names is never multiplied: C misses those products everywhere,
    and the interpreter's C equals the product over the even k steps only."""
    cex = finding("k_steps_skipped").counterexample
    (e,) = [x for x in cex.elements if x.tensor == "C"]
    missed = e.actual["k"]
    kernel, out, ref = run("k_steps_skipped", cex)
    assert wrong(out, ref, tuple(e.index))
    m, n, k = (cex.sizes[s] for s in ("M", "N", "K"))
    rng = np.random.default_rng(7)
    a = round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((n, k)).astype(np.float32))
    kept = np.zeros(k, bool)
    for step in range(0, k // 64, 2):
        kept[step * 64:(step + 1) * 64] = True
    assert not kept[missed]
    np.testing.assert_allclose(out, a[:, kept] @ b[:, kept].T, rtol=2 ** -7, atol=2 ** -6)


@pytest.mark.parametrize("name", NAMES)
def test_bug_is_reported_at_its_line_with_a_counterexample(name):
    f = finding(name)
    assert f.severity == "error"
    assert f.loc.file.endswith(f"{name}.py")
    assert f.counterexample is not None and f.counterexample.sizes
    assert f.hint and "Traceback" not in f.message


def run(name: str, cex, seed: int = 0):
    kernel, _ = analysed(name)
    m, n, k = (cex.sizes[s] for s in ("M", "N", "K"))
    rng = np.random.default_rng(7)
    a = round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((n, k)).astype(np.float32))
    blocks = list(cex.block) if cex.block else None
    result = interpret(kernel, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)},
                       seed=seed, blocks=blocks)
    return kernel, result.outputs["C"], a @ b.T


def wrong(out, ref, idx) -> bool:
    scale = np.abs(ref).max()
    return bool(np.isnan(out[idx]) or abs(out[idx] - ref[idx]) > TOL * scale)


def computed_by(kernel, cex) -> tuple[int, int]:
    """The C element that the counterexample's consumer thread and register compute."""
    bm, bn = kernel.constants["BM"], kernel.constants["BN"]
    first = min(r.warpgroups[0] for r in kernel.launch.roles if r.name == "consumer")
    return (cex.iteration["tm"] * bm + (cex.warpgroup - first) * 64 + cex.cell[0],
            cex.iteration["tn"] * bn + cex.cell[1])


@pytest.mark.parametrize("name", ["wrong_k_offset", "swapped_major"])
def test_interpreter_confirms_wgmma_bugs_at_the_thread_named(name):
    cex = finding(name).counterexample
    assert cex.thread is not None and cex.register is not None and cex.cell is not None
    kernel, out, ref = run(name, cex)
    assert wrong(out, ref, computed_by(kernel, cex))
    named = [e.index for e in cex.elements if e.tensor == "C"]
    if named:                                # the finding names the C element itself
        assert named[0] == computed_by(kernel, cex)


def test_k_offset_bug_needs_a_second_tile_and_the_interpreter_agrees():
    cex = finding("wrong_k_offset").counterexample
    assert cex.iteration["i"] == 1          # the first tile of every block is right
    kernel, out, ref = run("wrong_k_offset", cex)
    tm, tn = 0, 0                           # block 0's first tile (i = 0) is right
    rows, cols = slice(tm * 128, tm * 128 + 128), slice(tn * 256, tn * 256 + 256)
    np.testing.assert_allclose(out[rows, cols], ref[rows, cols], rtol=TOL,
                               atol=TOL * np.abs(ref).max())


def test_interpreter_confirms_the_stage_bug_on_the_tile_named():
    f = finding("wrong_stage")
    cex = f.counterexample
    assert cex.barrier == "full[0]" and "stage 1" in f.message
    kernel, out, ref = run("wrong_stage", cex)
    first = 1
    r0 = cex.iteration["tm"] * 128 + (cex.warpgroup - first) * 64
    c0 = cex.iteration["tn"] * 256
    tile = (slice(r0, r0 + 64), slice(c0, c0 + 256))
    bad = np.isnan(out[tile]) | (np.abs(out[tile] - ref[tile]) > TOL * np.abs(ref).max())
    assert bad.mean() > 0.5


def test_interpreter_confirms_the_store_coordinate_bug_at_the_destination():
    cex = finding("wrong_store_coords").counterexample
    (e,) = cex.elements
    dst = (e.expected["coord[0]"], e.expected["coord[1]"])
    came_from = (e.actual["tag.row"], e.actual["tag.col"])
    assert dst != came_from
    _, out, ref = run("wrong_store_coords", cex)
    assert wrong(out, ref, dst)
    np.testing.assert_allclose(out[dst], ref[came_from], rtol=TOL, atol=TOL * np.abs(ref).max())


def test_interpreter_confirms_the_race_the_second_warpgroup_loses_its_rows():
    f = finding("same_rows")
    cex = f.counterexample
    (e,) = cex.elements
    other = e.actual["second writer"]
    assert {cex.warpgroup, other["warpgroup"]} == {1, 2}
    _, out, ref = run("same_rows", cex)
    row, col = e.index
    # one of the two writers wins the element; the rows the other should have had are empty
    atol = TOL * np.abs(ref).max()
    assert any(abs(out[row, col] - ref[r, col]) <= atol for r in (row, row + 64))
    assert np.isnan(out[row + 64, col])


def test_interpreter_confirms_the_tail_tile_is_never_written():
    cex = finding("tail_tile").counterexample
    assert cex.sizes["M"] % 128 != 0
    (e,) = cex.elements
    _, out, ref = run("tail_tile", cex)
    assert np.isnan(out[e.index])
    # the other bug-free rows are right: the bug is only in the tail
    full = cex.sizes["M"] // 128 * 128
    np.testing.assert_allclose(out[:full], ref[:full], rtol=TOL, atol=TOL * np.abs(ref).max())


def test_swizzle_bug_confirmed_by_the_exact_interpreter():
    f = finding("wrong_swizzle")
    path = BUGS / "wrong_swizzle.py"
    ir = parse_kernel(path, "gemm")
    rng = np.random.default_rng(0)
    m, n, k = 128, 256, 128
    res = interpret(ir, {"A": rng.standard_normal((m, k)).astype(np.float32),
                         "B": rng.standard_normal((n, k)).astype(np.float32),
                         "C": np.full((m, n), np.nan, np.float32)}, seed=0, mode="exact")
    assert not res.ok
    text = " ".join(res.failures())
    assert "wgmma descriptor" in text and "none tile" in text
    wgmma_line = next(i + 1 for i, l in enumerate(path.read_text().splitlines())
                      if l.strip().startswith("wgmma(acc,"))
    assert f.loc.line == wgmma_line


def test_swizzle_bug_confirmed_on_concrete_bytes():
    """The layouts evaluated on ints: the byte the descriptor reads is the wrong element."""
    from argus.layout.hopper import TmaBox, descriptor_for, read_layout, smem_operand

    f = finding("wrong_swizzle")
    cex = f.counterexample
    (e,) = cex.elements
    byte = cex.smem_byte
    box = TmaBox(2, (64, 128), (2, 128), (64, 128), "none").smem_image()
    # the TMA wrote the actual element (row, col of the stage) at that byte...
    actual = (e.actual["row"], e.actual["col"])      # tm = k = 0: stage row/col = A's
    assert box((actual[1], actual[0])) == byte
    # ...and the unswizzled K-major descriptor of instruction 0 reads that byte for the
    # element the operand means
    wg = cex.warpgroup - 1                           # the band of rows 64 * wg ...
    operand = smem_operand(64, 64, 2, "K", "none", base=64 * wg * 128)
    desc = descriptor_for(operand, 8 * cex.iteration["instruction"] * 2)
    mn, kk = e.expected["row"] - 64 * wg, e.expected["col"]
    assert read_layout(desc, 2, "K", 64)((mn, kk)) == byte
    assert actual != (e.expected["row"], e.expected["col"])
