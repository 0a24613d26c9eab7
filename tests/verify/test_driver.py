"""The verifier driver: runs every installed pass, sorts and deduplicates, and turns a
crashing pass into a warning rather than a clean result."""

from __future__ import annotations

from pathlib import Path

from argus.frontend.parse import parse_kernel
from argus.ir.nodes import Loc
from argus.verify import driver, verify
from argus.verify.finding import Finding

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def f(check, line, severity="error"):
    return Finding(check, severity, "m", Loc("k.py", line, 1), "op", "h")


def test_dedupe_keeps_one_per_check_and_place_and_sorts_by_line():
    out = driver.dedupe([f("tag.b", 9), f("tag.a", 3), f("tag.b", 9), f("tag.a", 3, "warning")])
    assert [(x.check, x.loc.line) for x in out] == [("tag.a", 3), ("tag.b", 9)]


def test_gemm_has_no_errors_and_no_tag_findings():
    report = driver.run(parse_kernel(EXAMPLES / "gemm.py", "gemm"))
    assert report.ok and not [f for f in report.findings if f.check.startswith("tag")]
    assert "tags" in report.passes


def test_a_crashing_pass_is_a_warning(monkeypatch):
    import argus.verify.tags as tags

    def boom(kernel):
        raise RuntimeError("boom")

    monkeypatch.setattr(tags, "check", boom)
    out = verify(parse_kernel(EXAMPLES / "copy.py", "copy"))
    assert any(x.check == "tags.internal-error" and x.severity == "warning" for x in out)
