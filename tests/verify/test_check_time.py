"""How long `argus check`'s verifier takes on every kernel in the repository (the library,
the examples) and on the hand-written persistent grid-stride GEMM of tests/fixtures: each
file's kernels verified in this process with the solver's memo cleared first, timed by
wall clock. The target on the 2-core development machine is under 2 s per kernel (median
under 1 s); measured there (`python benchmarks/check_speed.py --all --fresh`, 2026-12-06: 103
kernels including the bug corpora and the library attention's specialisations, median
0.63 s): every library and example kernel under 2 s but the library attention's bshd
kernel (3.1 s; the file's two kernels bounded apart) and its causal specialisations
(2.6-4.5 s, not timed here), the persistent fixture 2.6 s. The bound here is 5 s
per file because CI shares its machine (two other jobs on the two cores
double these times). The slowest kernels of the bug corpora (whose counterexamples are
searched and minimised) are timed too, against a looser bound: the MoE ones take 3-6 s
on the lightly loaded machine (15-48 s before the products were solved lazily) and up to
about 10-20 s under load, not yet at the target. The times are printed (pytest -s shows
them)."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from argus.frontend import parse_file
from argus.verify import driver, smt

ROOT = Path(__file__).resolve().parents[2]
BOUND_S = 5.0
PERSISTENT = ROOT / "tests" / "fixtures" / "persistent_gemm.py"
# its injectivity query divides by a symbolic value: 0.6-2.5 s alone, and up to 5 s in a
# long process (z3's cost follows the order its terms were made in; CI, 2026-12-06: 5.01 s)
PERSISTENT_BOUND_S = 10.0
# the library attention's two kernels, verified since their split key loop is followed:
# 1.5 + 3.1 s of CPU on the idle machine, bshd not at the target yet
ATTENTION = ROOT / "argus" / "kernels" / "attention.py"
ATTENTION_BOUND_S = 20.0
FILES = sorted((ROOT / "argus" / "kernels").glob("*.py")) + \
    sorted((ROOT / "examples").glob("*.py")) + [PERSISTENT]
# the bug corpora's slowest kernels (each one kernel with errors to minimise)
BUGS = [ROOT / "examples" / "bugs" / p for p in (
    "moe/padding_rows_stored.py", "moe/tail_rows_unmasked.py",
    "moe/padded_offsets_as_rows.py", "moe/gather_by_slot.py",
    "moe/weight_of_next_expert.py", "gemm_cluster/schedule_by_block.py",
    "gemm_splitk/plain_store.py", "vacuity/kt_swapped_division.py")]
BUG_BOUND_S = 30.0
# CI times the three slowest of them (check_speed_all.json, 2026-12-06/07); the rest with -m slow
SLOWEST_BUGS = [ROOT / "examples" / "bugs" / p for p in (
    "moe/padding_rows_stored.py", "moe/gather_by_slot.py", "gemm_cluster/schedule_by_block.py")]


def _fresh_memo() -> None:
    smt._UNSAT.clear()
    smt._SAT.clear()


def _times(files):
    times, verdicts = {}, {}
    for path in files:
        kernels = parse_file(path)
        if not kernels:
            continue
        _fresh_memo()
        start = time.perf_counter()
        for name, k in kernels.items():
            verdicts[f"{path.name}::{name}"] = driver.run(k).verdict
        times[str(path.relative_to(ROOT))] = time.perf_counter() - start
    for name, t in times.items():
        print(f"check {name}: {t:.2f} s")
    return times, verdicts


def test_every_kernel_in_the_repo_checks_within_the_bound():
    driver.run(parse_file(ROOT / "examples" / "copy.py")["copy"])     # imports, warm-up
    times, verdicts = _times(FILES)
    print(f"median {statistics.median(times.values()):.2f} s over {len(times)} files")
    bounds = {str(ATTENTION.relative_to(ROOT)): ATTENTION_BOUND_S,
              str(PERSISTENT.relative_to(ROOT)): PERSISTENT_BOUND_S}
    slow = {n: round(t, 2) for n, t in times.items() if t > bounds.get(n, BOUND_S)}
    assert not slow, slow
    assert "failed" not in verdicts.values(), verdicts


@pytest.mark.parametrize("bugs", [
    pytest.param(SLOWEST_BUGS, id="slowest-three"),
    pytest.param([b for b in BUGS if b not in SLOWEST_BUGS], id="the-others",
                 marks=pytest.mark.slow)])
def test_the_slowest_bug_corpus_kernels_check_within_their_bound(bugs):
    driver.run(parse_file(ROOT / "examples" / "copy.py")["copy"])     # imports, warm-up
    times, verdicts = _times(bugs)
    slow = {n: round(t, 2) for n, t in times.items() if t > BUG_BOUND_S}
    assert not slow, slow
    assert set(verdicts.values()) == {"failed"}, verdicts


def test_the_persistent_grid_stride_fixture_has_no_false_finding():
    """Its loop `range(bid, NT, BLOCKS)` once gave a false index overflow (a counter past
    the loop's stop) and false parity findings (two trips for one loop); what is left is
    the coverage of a `w // TN`, `w % TN` destination, which is not proved (a warning)."""
    k = parse_file(ROOT / "tests" / "fixtures" / "persistent_gemm.py")["persistent_gemm"]
    report = driver.run(k)
    assert not [f for f in report.findings if f.severity == "error"], report.findings
    assert {f.check for f in report.findings} <= {"tag.store-coverage"}, report.findings
