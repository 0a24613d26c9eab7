"""How long `argus check`'s verifier takes on every kernel in the repository (the library,
the examples) and on the hand-written persistent grid-stride GEMM of tests/fixtures: each
file's kernels verified in this process with the solver's memo cleared first, timed by
wall clock. The target on the 2-core development machine is under 2 s per file (median
under 1 s; docs/soundness-report.md records the measured times); the bound here is loose
(6 s; 12 s for the persistent fixture and 60 s for the library attention's two kernels,
not yet at the target) because CI shares its machine. The times are printed (pytest -s shows them)."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from argus.frontend import parse_file
from argus.verify import driver, smt

ROOT = Path(__file__).resolve().parents[2]
BOUND_S = 6.0
# the hand-written persistent loop is not at the target yet: about 4 s on the idle machine
# (12 s before its loop was modelled); bounded apart so a regression still shows
PERSISTENT = ROOT / "tests" / "fixtures" / "persistent_gemm.py"
PERSISTENT_BOUND_S = 12.0
# the library attention's two kernels, verified since their split key loop is followed:
# 13 s for the two on the idle machine, not at the target yet
ATTENTION = ROOT / "argus" / "kernels" / "attention.py"
ATTENTION_BOUND_S = 60.0
FILES = sorted((ROOT / "argus" / "kernels").glob("*.py")) + \
    sorted((ROOT / "examples").glob("*.py")) + [PERSISTENT]


def _fresh_memo() -> None:
    smt._UNSAT.clear()
    smt._SAT.clear()


def test_every_kernel_in_the_repo_checks_within_the_bound():
    driver.run(parse_file(ROOT / "examples" / "copy.py")["copy"])     # imports, warm-up
    times, verdicts = {}, {}
    for path in FILES:
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
    print(f"median {statistics.median(times.values()):.2f} s over {len(times)} files")
    bounds = {str(PERSISTENT.relative_to(ROOT)): PERSISTENT_BOUND_S,
              str(ATTENTION.relative_to(ROOT)): ATTENTION_BOUND_S}
    slow = {n: round(t, 2) for n, t in times.items() if t > bounds.get(n, BOUND_S)}
    assert not slow, slow
    assert "failed" not in verdicts.values(), verdicts


def test_the_persistent_grid_stride_fixture_has_no_false_finding():
    """Its loop `range(bid, NT, BLOCKS)` once gave a false index overflow (a counter past
    the loop's stop) and false parity findings (two trips for one loop); what is left is
    the coverage of a `w // TN`, `w % TN` destination, which is not proved (a warning)."""
    k = parse_file(ROOT / "tests" / "fixtures" / "persistent_gemm.py")["persistent_gemm"]
    report = driver.run(k)
    assert not [f for f in report.findings if f.severity == "error"], report.findings
    assert {f.check for f in report.findings} <= {"tag.store-coverage"}, report.findings
