"""Vacuity (argus/verify/vacuity.py): assumptions no size satisfies and loops that never
run are errors at their line, where before every check held vacuously and the kernel was
called verified. Each bug file of examples/bugs/vacuity/ is confirmed wrong by the
interpreter (its output differs from A @ B^T, or no shape satisfies its assumptions) and
caught at the line its docstring names; every correct kernel of the repo has no vacuity
finding."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_file
from argus.interp.errors import InterpretError
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from argus.verify import driver, vacuity

REPO = Path(__file__).resolve().parents[2]
BUGS = REPO / "examples" / "bugs" / "vacuity"
EXPECTED = re.compile(r"Expected: (vacuity\.\w+) at lines? (\d+)(?: and (\d+))?")
CORRECT = sorted([*(REPO / "examples").glob("*.py"), *(REPO / "argus" / "kernels").glob("*.py")])


@lru_cache(maxsize=None)
def report(name: str):
    kernel = parse_file(BUGS / f"{name}.py")["gemm"]
    return kernel, driver.run(kernel)


def expected(name: str) -> tuple[str, list[int]]:
    m = EXPECTED.search((BUGS / f"{name}.py").read_text())
    assert m, f"{name}.py names no 'Expected: vacuity.<check> at line N'"
    return m.group(1), [int(x) for x in m.groups()[1:] if x]


def gemm_on(kernel, m: int, n: int, k: int):
    rng = np.random.default_rng(3)
    a = round_to_bf16(rng.standard_normal((m, k)).astype(np.float32))
    b = round_to_bf16(rng.standard_normal((n, k)).astype(np.float32))
    out = interpret(kernel, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)})
    return out.outputs["C"], a.astype(np.float64) @ b.T.astype(np.float64)


def test_the_corpus_has_its_three_bugs():
    assert sorted(p.stem for p in BUGS.glob("*.py")) == [
        "assume_remainder_is_tile", "kt_remainder", "kt_swapped_division", "store_dropped"]


@pytest.mark.parametrize("name", ["kt_remainder", "kt_swapped_division"])
def test_a_loop_that_never_runs_is_caught_at_its_line_and_the_output_is_wrong(name):
    kernel, r = report(name)
    check, lines = expected(name)
    hits = {f.loc.line for f in r.findings if f.check == check and f.severity == "error"}
    assert hits == set(lines), [str(f) for f in r.findings]
    assert r.verdict == "failed" and not r.ok
    k = 128                                   # K // BK = 2, K % BK = 0, BK // K = 0
    c, ref = gemm_on(kernel, 128, 256, k)
    assert not np.isnan(c).any()              # every element is written ...
    assert np.abs(c).max() == 0.0 < np.abs(ref).max()     # ... with the initial 0.0


def test_a_loop_that_can_run_zero_times_names_the_sizes():
    _, r = report("kt_swapped_division")
    f = next(f for f in r.findings if f.check == "vacuity.loop")
    sizes = f.counterexample.sizes
    assert sizes["K"] >= 128 and sizes["K"] % 64 == 0 and 64 // sizes["K"] == 0
    assert sizes["M"] >= 1 and sizes["N"] >= 1
    assert "zero times for admitted sizes" in f.message and f.hint


def test_an_assumption_no_size_satisfies_is_caught_and_no_shape_runs():
    kernel, r = report("assume_remainder_is_tile")
    check, (line,) = expected("assume_remainder_is_tile")
    (f,) = [f for f in r.findings if f.check == check]
    assert f.severity == "error" and f.loc.line == line and r.verdict == "failed"
    for k in (64, 128, 192):                  # the interpreter refuses every K
        with pytest.raises(InterpretError, match="assumption does not hold"):
            gemm_on(kernel, 128, 256, k)


CONTRADICTION = '''\
from argus.lang import Tensor, assume, block_id, const, fp32, kernel, load, store, tile


@kernel(grid=("M // BM",), block=128)
def copy(X: Tensor["M", 64, fp32], Y: Tensor["M", 64, fp32], BM: const = 64):
    assume(M % BM == 0)
    assume(M > 4096)
    assume(M < 2048)
    x = load(tile(X, (BM, 64), (block_id("x"), 0)), "blocked")
    store(tile(Y, (BM, 64), (block_id("x"), 0)), x)
'''

SPLIT_BY_BLOCK = '''\
from argus.lang import Tensor, assign, assume, block_id, const, fp32, fragment, kernel
from argus.lang import load, store, tile


@kernel(grid=(4,), block=128)
def rows(X: Tensor["M", 64, fp32], Y: Tensor["M", 64, fp32], BM: const = 64):
    assume(M % BM == 0)
    b = block_id("x")
    for t in range(b, M // BM, 4):       # block b's share: none when b >= M // BM
        x = load(tile(X, (BM, 64), (t, 0)), "blocked")
        store(tile(Y, (BM, 64), (t, 0)), x)
'''


def test_the_assumption_named_is_the_one_that_closes_the_contradiction(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(CONTRADICTION)
    (f,) = vacuity.check(parse_file(path)["copy"])
    assert f.check == "vacuity.assume" and f.loc.line == 8
    assert "line(s) 7" in f.message and "6" not in f.message.split("line(s)")[1]


def test_a_loop_whose_share_depends_on_the_block_is_not_reported(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(SPLIT_BY_BLOCK)
    assert vacuity.check(parse_file(path)["rows"]) == []


@pytest.mark.parametrize("path", CORRECT, ids=lambda p: p.name)
def test_no_correct_kernel_has_a_vacuity_finding(path):
    for name, kernel in parse_file(path).items():
        assert vacuity.check(kernel) == [], name


def test_a_kernel_whose_store_is_missing_is_caught_and_its_output_is_never_written():
    kernel, r = report("store_dropped")
    check, (line,) = expected("store_dropped")
    (f,) = [f for f in r.findings if f.check == check]
    assert f.severity == "error" and f.loc.line == line and "no op writes" in f.message
    assert r.verdict == "failed"
    c, ref = gemm_on(kernel, 128, 256, 64)
    assert np.isnan(c).all() and np.isfinite(ref).all()


NAMED_ONLY = '''\
from argus.lang import Tensor, block_id, coord, fp32, kernel, load, store, tag, tag_assert
from argus.lang import tile


@kernel(grid=(1,), block=128)
def copy(X: Tensor[64, 64, fp32], Y: Tensor[64, 64, fp32], Z: Tensor[64, 64, fp32]):
    x = load(tile(X, (64, 64), (0, 0)), "blocked")
    z = tile(Z, (64, 64), (0, 0))
    tag_assert(tag(x).row == coord(z)[0])
    store(tile(Y, (64, 64), (0, 0)), x)
'''


def test_a_tensor_only_named_is_reported_and_the_others_are_not(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(NAMED_ONLY)
    (f,) = vacuity.outputs(parse_file(path)["copy"])
    assert f.check == "vacuity.output" and "tensor Z is never read nor written" in f.message
    assert f.loc.line == 6


def test_a_loop_query_z3_cannot_decide_is_a_warning_not_a_pass(monkeypatch):
    import z3

    kernel = parse_file(REPO / "examples" / "gemm.py")["gemm"]
    monkeypatch.setattr(vacuity, "_holds_in", lambda model, formulas: False)
    monkeypatch.setattr(vacuity, "_solve", lambda formulas: z3.unknown)
    found = vacuity.check(kernel)
    assert found and {f.check for f in found} == {"vacuity.undecided"}
    assert all(f.severity == "warning" and f.unproved for f in found)


# one range of tiles split at NF (the tiles below it plain, the rest another way): each part
# alone may run zero times, together they cover [0, NT)
SPLIT_LOOP = '''\
from argus.lang import Tensor, assume, const, fp32, kernel, load, minimum, store, tile


@kernel(grid=(1,), block=128)
def rows(X: Tensor["M", 64, fp32], Y: Tensor["M", 64, fp32], BM: const = 64):
    assume(M % BM == 0)
    nt = M // BM
    nf = minimum(NF_OF_M, nt)
    for t in range(nf):
        x = load(tile(X, (BM, 64), (t, 0)), "blocked")
        store(tile(Y, (BM, 64), (t, 0)), x)
    for t in range(nf, nt):
        x = load(tile(X, (BM, 64), (t, 0)), "blocked")
        store(tile(Y, (BM, 64), (t, 0)), x * 2.0)
'''


def split_loop(tmp_path, nf_of_m: str, second_start: str = "nf"):
    path = tmp_path / "k.py"
    path.write_text(SPLIT_LOOP.replace("NF_OF_M", nf_of_m)
                    .replace("range(nf, nt)", f"range({second_start}, nt)"))
    return vacuity.check(parse_file(path)["rows"])


def test_a_loop_split_in_two_that_covers_its_range_is_not_reported(tmp_path):
    # each part runs zero times for some sizes (M = 64: the first runs once, the second
    # never; M = 192: the first never when nf = M // 128 - 1 = 0 ...), the union never
    assert split_loop(tmp_path, "M // 128") == []
    assert split_loop(tmp_path, "(M // BM) // 2") == []


def test_a_split_loop_whose_union_can_be_empty_is_reported_at_the_first_part(tmp_path):
    # nt = M // BM - 1 is 0 at M = 64: both parts run zero times there
    path = tmp_path / "k.py"
    path.write_text(SPLIT_LOOP.replace("NF_OF_M", "M // 128")
                    .replace("nt = M // BM", "nt = M // BM - 1"))
    (f,) = vacuity.check(parse_file(path)["rows"])
    assert f.check == "vacuity.loop" and f.severity == "error" and f.loc.line == 9
    assert "one range split in two" in f.message and "line(s) 12" in f.message
    assert f.counterexample.sizes["M"] == 64


def test_loops_that_do_not_continue_each_other_are_checked_apart(tmp_path):
    # the second starts at 1, not where the first stops: no split, and at M = 64 the
    # second runs zero times while it writes
    found = split_loop(tmp_path, "M // 128", second_start="1")
    assert {(f.check, f.loc.line) for f in found} == {("vacuity.loop", 9),
                                                      ("vacuity.loop", 12)}


def test_a_dead_part_of_a_split_loop_is_reported(tmp_path):
    # nf = 0 for every size: the first part is dead code, though the union covers [0, nt)
    (f,) = split_loop(tmp_path, "0 * M")
    assert f.check == "vacuity.loop" and f.loc.line == 9
    assert "zero times for every admitted size" in f.message
