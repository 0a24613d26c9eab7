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


def report_of(*findings, missing=()):
    return driver.Report("k", list(findings), ["tags"], list(missing))


def test_the_verdict_is_verified_only_when_everything_is_proved():
    assert report_of().verdict == "verified" and report_of().ok
    unproved = report_of(f("tag.undecided", 3, "warning"))
    assert unproved.verdict == "unverified" and not unproved.ok
    assert unproved.unverified_reasons == ["k.py:3:1: tag.undecided: m"]
    failed = report_of(f("tag.undecided", 3, "warning"), f("tag.stage", 5))
    assert failed.verdict == "failed" and not failed.ok
    # a cost, not a gap in the proof: the only warnings that leave the verdict alone
    advisory = report_of(f("protocol.bank-conflict", 4, "warning"))
    assert advisory.verdict == "verified" and advisory.ok
    # a pass that is not installed proves nothing
    missing = report_of(missing=["protocol"])
    assert missing.verdict == "unverified" and "protocol" in missing.unverified_reasons[0]


def test_a_crashing_pass_makes_the_kernel_unverified(monkeypatch):
    import argus.verify.tags as tags

    monkeypatch.setattr(tags, "check", lambda kernel: 1 / 0)
    r = driver.run(parse_kernel(EXAMPLES / "copy.py", "copy"))
    assert r.verdict == "unverified" and not r.ok
    assert any("tags.internal-error" in why and "ZeroDivisionError" in why
               for why in r.unverified_reasons)


def test_a_tag_rule_that_raises_a_type_error_surfaces_as_unverified_with_its_reason(
        monkeypatch):
    """walker.py reports a rule's TypeError as a verifier defect (tag.internal-error, no
    longer folded into "not modelled"): a warning naming the error, which makes the
    verdict unverified (it was exit 0, ok true before)."""
    from argus.verify.tags import rules

    def broken(w, op):
        raise TypeError("unsupported operand type(s) for +: 'BoolRef' and 'int'")

    monkeypatch.setitem(rules.RULES, "load", broken)
    r = driver.run(parse_kernel(EXAMPLES / "copy.py", "copy"))
    assert r.verdict == "unverified" and not r.ok
    (why,) = [w for w in r.unverified_reasons if "tag.internal-error" in w]
    assert "defect of the verifier" in why
    assert "TypeError" in why and "BoolRef" in why and "copy.py:17:" in why


def test_the_vacuity_pass_runs_on_every_kernel():
    r = driver.run(parse_kernel(EXAMPLES / "copy.py", "copy"))
    assert "vacuity" in r.passes and r.verdict == "verified"
