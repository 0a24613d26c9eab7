"""`argus check` on the library attention kernels (argus/kernels/attention.py, both
layouts): within the check-time bound, no error (the head segments, the split key loop
and the size parameters are proved: docs/design/verifier-attention.md), and what leaves
them unverified is the tag pass alone (it does not follow the split key loop yet). The
goal, both verified within 2 s each, is the strict xfail below: it fails, so the marker
must go, the day they verify."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from argus.frontend import parse_file
from argus.verify import driver, smt

ROOT = Path(__file__).resolve().parents[2]
ATTENTION = ROOT / "argus" / "kernels" / "attention.py"
BOUND_S = 6.0          # per kernel, loose as in test_check_time.py (CI shares its machine)
TARGET_S = 2.0
NAMES = ("attention_bhsd", "attention_bshd")


def timed(name: str):
    kernel = parse_file(ATTENTION)[name]
    smt._UNSAT.clear()
    smt._SAT.clear()
    start = time.perf_counter()
    report = driver.run(kernel)
    return report, time.perf_counter() - start


@pytest.mark.parametrize("name", NAMES)
def test_no_error_and_only_the_tag_pass_leaves_it_unverified(name):
    report, seconds = timed(name)
    print(f"check {name}: {seconds:.2f} s, {report.verdict}")
    assert seconds < BOUND_S, seconds
    assert not [f for f in report.findings if f.severity == "error"], report.findings
    # the size parameters, the split loop (vacuity, protocol) and the segments are proved
    assert {f.check.split(".")[0] for f in report.findings if f.unproved} <= {"tag"}, \
        report.unverified_reasons
    assert not [f for f in report.findings if f.check in (
        "tag.index-range", "tag.store-race", "tag.store-coverage", "tag.undecided")], \
        report.unverified_reasons


@pytest.mark.xfail(strict=True, reason="the tag pass does not follow the split key loop "
                   "(MASK='edge') nor the tails of the last head yet; see "
                   "docs/design/verifier-attention.md")
@pytest.mark.parametrize("name", NAMES)
def test_verified_within_two_seconds(name):
    report, seconds = timed(name)
    assert report.verdict == driver.VERIFIED, report.unverified_reasons
    assert seconds < TARGET_S, seconds
