"""The verifier's second process (argus.verify.forked): the same findings and verdict as
one process, on a verified kernel and on bug files; a child that raises or dies is a
warning that leaves the kernel unverified, never a clean result."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from argus.frontend import parse_file
from argus.verify import driver, forked

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _key(report):
    """What must not change: the verdict and each finding's check, severity and place.
    (A counterexample's values are the solver's minimum for one term order: within one
    long process, what ran before can move them; they are compared in a fresh one.)"""
    return report.verdict, [(f.check, f.severity, f.loc.line, f.counterexample is None)
                            for f in report.findings]


def test_start_returns_the_childs_value():
    assert forked.start(lambda: {"a": [1, 2]}).result() == {"a": [1, 2]}


def test_a_raising_child_is_reported():
    def boom():
        raise ValueError("no such tile")
    with pytest.raises(forked.ChildFailed, match="ValueError: no such tile"):
        forked.start(boom).result()


def test_a_child_that_dies_is_reported():
    with pytest.raises(forked.ChildFailed, match="status 3"):
        forked.start(lambda: os._exit(3)).result()


def test_jobs_follows_the_environment(monkeypatch):
    monkeypatch.setenv("ARGUS_VERIFY_JOBS", "1")
    assert forked.jobs() == 1
    monkeypatch.setenv("ARGUS_VERIFY_JOBS", "2")
    assert forked.jobs() == 2
    monkeypatch.setenv("ARGUS_VERIFY_JOBS", "two")
    assert forked.jobs() == 1


@pytest.mark.parametrize("path, name", [
    ("examples/gemm.py", None),
    ("examples/bugs/attention/store_wrong_rows.py", None),
    pytest.param("examples/bugs/attention/kv_wrong_head.py", None, marks=pytest.mark.slow),
    pytest.param("examples/bugs/moe/weight_of_next_expert.py", None, marks=pytest.mark.slow),
])
def test_two_processes_find_what_one_finds(path, name):
    kernels = parse_file(ROOT / path)
    for kname, kernel in kernels.items():
        serial = driver.run(kernel, jobs=1)
        split = driver.run(kernel, jobs=2)
        assert _key(split) == _key(serial), kname
        assert split.passes == serial.passes


def test_a_pass_dying_in_the_child_leaves_the_kernel_unverified(monkeypatch):
    import argus.verify.protocol as protocol
    kernel = parse_file(ROOT / "examples" / "copy.py")["copy"]
    assert driver.run(kernel, jobs=2).verdict == driver.VERIFIED
    monkeypatch.setattr(protocol, "check", lambda k: os._exit(7))
    report = driver.run(kernel, jobs=2)
    assert report.verdict == driver.UNVERIFIED
    assert any(f.check == "verify.internal-error" and "status 7" in f.message
               for f in report.findings)


def test_coverage_dying_in_the_child_leaves_the_kernel_unverified(monkeypatch):
    from argus.verify.tags import writers
    kernel = parse_file(ROOT / "examples" / "copy.py")["copy"]
    monkeypatch.setattr(writers, "coverage", lambda w: os._exit(5))
    report = driver.run(kernel, jobs=2)
    assert report.verdict == driver.UNVERIFIED
    assert any(f.check == "tag.internal-error" for f in report.findings)
