"""The wall-clock bound on checking a kernel (argus/verify/deadline.py): past it the kernel is
unverified with a `verify.deadline` warning, what the finished passes found is kept, no
forked child outlives it, and z3 works as before afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import z3

from argus.frontend import parse_file
from argus.verify import deadline, driver, forked

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "examples" / "gemm.py"
PROTOCOL_BUG = ROOT / "examples" / "bugs" / "gemm_protocol" / "parity_k_and_1.py"


def _kernel(path: Path):
    return next(iter(parse_file(path).values()))


def _slow_tag_pass(monkeypatch, seconds: float = 30.0):
    """The tag pass as a kernel whose queries never end: it sleeps (a signal ends it)."""
    import argus.verify.tags as tags
    monkeypatch.setattr(tags, "check", lambda kernel, jobs=1: time.sleep(seconds) or [])


def test_a_check_past_its_deadline_is_unverified_and_says_why(monkeypatch):
    _slow_tag_pass(monkeypatch)
    start = time.monotonic()
    report = driver.run(_kernel(GEMM), jobs=1, seconds=0.5)
    assert time.monotonic() - start < 5
    assert report.verdict == driver.UNVERIFIED
    [late] = [f for f in report.findings if f.check == "verify.deadline"]
    assert late.unproved and "0.5 s" in late.message and "--deadline" in late.hint
    assert not deadline.active()                     # disarmed: nothing fires later


def test_without_a_deadline_the_same_kernel_verifies():
    assert driver.run(_kernel(GEMM), jobs=1, seconds=None).verdict == driver.VERIFIED
    assert driver.run(_kernel(GEMM), jobs=1, seconds=60).verdict == driver.VERIFIED


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_the_forked_passes_findings_are_kept_and_no_child_outlives_the_deadline(monkeypatch):
    """The protocol pass (in the child) finds the parity bug; the tag pass (here) runs past
    the deadline: the error is reported (replayed), with the deadline warning."""
    _slow_tag_pass(monkeypatch)
    report = driver.run(_kernel(PROTOCOL_BUG), jobs=2, seconds=3.0)
    checks = {f.check for f in report.findings}
    assert "verify.deadline" in checks
    assert any(f.severity == "error" and f.check.startswith("protocol.") for f in report.findings)
    assert report.verdict == driver.FAILED
    assert "protocol" in report.passes and "tags" not in report.passes
    assert not forked._live


def test_a_long_z3_query_is_interrupted_at_the_deadline():
    """A query z3 would work on for minutes (factoring a 64-bit semiprime by bit-blasting)
    ends at the deadline; afterwards z3 answers as before."""
    x, y = z3.BitVecs("x y", 64)
    hard = z3.Solver()
    hard.add(x * y == 0xC3F5E29B3D5A1E47, z3.UGT(x, 1), z3.UGT(y, 1),
             z3.ULT(x, 2 ** 32), z3.ULT(y, 2 ** 32))
    start = time.monotonic()
    with pytest.raises(deadline.Expired):
        with deadline.bound(0.5):
            hard.check()
    assert time.monotonic() - start < 3
    easy = z3.Solver()
    easy.add(x + 1 == 3)
    assert easy.check() == z3.sat                  # the context is not left interrupted


def test_an_inner_bound_does_not_extend_an_outer_one():
    with deadline.bound(5):
        with deadline.bound(100):
            assert deadline.remaining() <= 5
        assert 0 < deadline.remaining() <= 5
    assert deadline.remaining() is None


def test_a_sooner_inner_bound_ends_first_and_the_outer_one_holds_after():
    with deadline.bound(30):
        with pytest.raises(deadline.Expired):
            with deadline.bound(0.2):
                time.sleep(5)
        assert 25 < deadline.remaining() <= 30
    assert deadline.remaining() is None
    assert all(t.name != "argus-verify-deadline" for t in threading.enumerate())


@pytest.mark.parametrize("text, seconds", [("2.5", 2.5), ("0", None), ("none", None)])
def test_deadline_values(text, seconds):
    assert deadline.parse(text, "--deadline") == seconds


@pytest.mark.parametrize("text", ["-1", "soon", "nan", "inf"])
def test_a_bad_deadline_is_a_usage_error(text):
    out = subprocess.run([sys.executable, "-m", "argus.cli.main", "check", "--deadline", text,
                          str(GEMM)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2 and "--deadline" in out.stderr and "Traceback" not in out.stderr


def test_the_environment_sets_the_default(monkeypatch):
    monkeypatch.setenv("ARGUS_VERIFY_DEADLINE", "7")
    assert deadline.from_env() == 7
    monkeypatch.setenv("ARGUS_VERIFY_DEADLINE", "0")
    assert deadline.from_env() is None
    monkeypatch.delenv("ARGUS_VERIFY_DEADLINE")
    assert deadline.from_env() == deadline.DEFAULT_S
