"""An op walked again (another part of a split key loop, another call site or warpgroup)
that fails again is confirmed with a model but not minimised (tags/walker.py minimising):
its finding is a duplicate that driver.dedupe drops, so the reported findings are those of
minimising every time (checks, places, severities; the counterexamples' values are the
solver's minimum for one term order, which what ran before in a process can move)."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.frontend import parse_file
from argus.verify import driver, smt
from argus.verify.tags import report
from argus.verify.tags.walker import Walker

ROOT = Path(__file__).resolve().parents[2]
BUGS = [("examples/bugs/attention/kv_wrong_head.py", "attention_bshd"),
        pytest.param("examples/bugs/moe/tail_rows_unmasked.py", "moe_grouped",
                     marks=pytest.mark.slow)]


def _findings(kernel):
    smt._UNSAT.clear()
    smt._SAT.clear()
    return [(f.check, f.severity, f.loc.line, f.counterexample is None)
            for f in driver.run(kernel).findings]


@pytest.mark.parametrize("path, name", BUGS)
def test_the_reported_findings_are_those_of_minimising_every_time(path, name, monkeypatch):
    kernel = parse_file(ROOT / path)[name]
    fast = _findings(kernel)
    monkeypatch.setattr(Walker, "minimising", lambda self: True)
    assert _findings(kernel) == fast
    assert any(f[1] == "error" for f in fast)


def test_a_revisited_failing_op_is_not_minimised_again(monkeypatch):
    kernel = parse_file(ROOT / BUGS[0][0])[BUGS[0][1]]   # kv_wrong_head's bshd kernel
    real_order, real_find = report.order_of, report.find

    def walk():
        asked, searched = [], []
        monkeypatch.setattr(report, "order_of",
                            lambda *a, **k: asked.append(1) or real_order(*a, **k))
        monkeypatch.setattr(report, "find",
                            lambda *a, **k: searched.append(1) or real_find(*a, **k))
        w = Walker(kernel)
        w.run()
        return asked, searched, [f for f in w.findings if f.severity == "error"]

    # the wrong-head wgmma fails in both parts of the split key loop: searched once (its
    # check already reported there, a second would be a duplicate dedupe drops)
    asked, searched, errors = walk()
    assert len(errors) == len({(f.check, f.loc) for f in errors})
    monkeypatch.setattr(Walker, "reported", lambda self, check, loc: False)
    _, searched_again, again = walk()
    assert len(again) > len({(f.check, f.loc) for f in again})
    assert len(searched) < len(searched_again)
    # and minimising every time (no duplicate skipped either) asks for more orders
    monkeypatch.setattr(Walker, "minimising", lambda self: True)
    every_time, _, _ = walk()
    assert len(asked) < len(every_time)
