"""The differential soundness mode (tools/mutation/differential.py, soundness.py, sample.py,
causes.py, soundness_md.py): what `argus check` accepts runs on the interpreter on every
shape; what it rejects does not; the classes, stable keys, causes and the report."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from argus.verify.driver import Report
from tools.mutation import generate_mutants
from tools.mutation.classify import RunOutcome
from tools.mutation.differential import (CAUGHT, CLASSES, FAILURES, INTERP_ERROR, REJECTED,
                                         UNVERIFIED, VERIFIED_CORRECT, VERIFIED_WRONG,
                                         check_then_run, unified_diff)
from tools.mutation.mutant import Mutant
from tools.mutation.sample import keys, seeded_sample
from tools.mutation.targets import TARGETS

COPY = TARGETS["copy"]
ROOT = Path(__file__).resolve().parents[2]


def _copy_mutant(after: str) -> Mutant:
    return next(m for m in generate_mutants(COPY) if m.after == after)


def test_the_unmutated_kernel_is_verified_and_runs_correctly_on_every_shape():
    result = check_then_run(COPY, COPY.source())
    assert result.cls == VERIFIED_CORRECT and result.verdict == "verified"
    # every shape, then the first once more with the blocks in reverse order
    assert [r.shapes for r in result.runs] == \
        list(COPY.all_shapes) + [{**COPY.all_shapes[0], "blocks": "reversed"}] and \
        len(COPY.all_shapes) >= 2
    assert all(r.outcome == "correct" for r in result.runs)


def test_a_race_between_blocks_is_wrong_in_the_reversed_order():
    """moe_place reading as its first slots the counts its own blocks store (a mutant the
    router fuzz found verified before countsort_scatter.finish): right with the blocks in
    index order, wrong the other way round."""
    import numpy as np

    from argus.frontend import parse_source
    from argus.interp.evaluator import interpret
    from argus.ops.library import KERNEL_DIR
    src = (KERNEL_DIR / "moe_route.py").read_text().replace(
        "COUNT_HERE = 0 ", "COUNT_HERE = 1 ").replace(
        "    if COUNT_HERE == 1:     # the expert's first slot",
        "    if COUNT_HERE == 2:     # the expert's first slot")
    k = parse_source(src, "v.py", {"E": 8, "TOPK": 2, "BS": 128})["moe_place"]
    experts = np.array([3, 5, 1, 0, 7, 2], np.int32)
    slots = []
    for reverse in (False, True):
        out = interpret(k, {"experts": experts, "gates": np.ones(6, np.float32),
                            "counts": np.full(8, -7, np.int32),
                            "ids": np.full(6, -7, np.int32), "slots": np.full(6, -7, np.int32),
                            "wsorted": np.full(6, np.nan, np.float32)},
                        seed=3, reverse_blocks=reverse).outputs
        slots.append(out["slots"].tolist())
    assert slots[0] == [3, 4, 1, 0, 5, 2] and slots[1] != slots[0]


def test_a_caught_mutant_is_not_run():
    m = next(m for m in generate_mutants(TARGETS["gemm"])
             if m.after == "wait(full[s], (g & 1))")
    result = check_then_run(TARGETS["gemm"], m.source)
    assert result.cls == CAUGHT and result.runs == []
    assert any(e.startswith("protocol.parity") for e in result.errors)


def test_a_frontend_rejection_keeps_its_message():
    src = COPY.source().replace('load(src, "blocked")', 'load(src, "no_such")')
    result = check_then_run(COPY, src)
    assert result.cls == REJECTED and "examples/copy.py:" in result.message


def _accept_everything(monkeypatch, findings=(), ok=True):
    class Stub(Report):
        @property
        def ok(self):
            return ok
    monkeypatch.setattr("argus.verify.driver.run",
                        lambda kernel: Stub(kernel.name, list(findings)))


def test_an_accepted_wrong_mutant_is_a_failure_with_the_interpreters_evidence(monkeypatch):
    _accept_everything(monkeypatch)          # as if the verifier missed the dropped store
    m = _copy_mutant("pass")
    result = check_then_run(COPY, m.source)
    assert result.cls == VERIFIED_WRONG and result.failed
    assert len(result.runs) == 1                               # stops at the first bad shape
    assert result.evidence.startswith("wrong at M=128,N=192:") and "NaN" in result.evidence


def test_an_interpreter_error_is_a_failure_of_its_own(monkeypatch):
    _accept_everything(monkeypatch)
    monkeypatch.setattr("tools.mutation.differential.run_once",
                        lambda *a: RunOutcome("value", 0, "error", "mbarrier index 9"))
    result = check_then_run(COPY, COPY.source())
    assert result.cls == INTERP_ERROR and INTERP_ERROR in FAILURES
    assert "mbarrier index 9" in result.evidence


def test_no_error_but_not_accepted_is_unverified_and_not_run(monkeypatch):
    _accept_everything(monkeypatch, ok=False)
    result = check_then_run(COPY, COPY.source())
    assert result.cls == UNVERIFIED and result.runs == []


def test_keys_survive_renumbering_and_tell_identical_edits_apart():
    ms = [Mutant(f"t-{i:03d}", "t", "walk_order", "k.py", line, "for a:", "for b:", "")
          for i, line in enumerate((10, 20))]
    shifted = [Mutant(f"t-{i + 5:03d}", "t", "walk_order", "k.py", line + 3, "for a:",
                      "for b:", "") for i, line in enumerate((10, 20))]
    assert list(keys(ms)) == list(keys(shifted)) == ["t:walk_order:for a: -> for b:#0",
                                                     "t:walk_order:for a: -> for b:#1"]


def test_the_seeded_sample_takes_the_same_mutants_per_operator_whatever_the_others():
    keyed = keys(generate_mutants(TARGETS["gemm"]))
    sample = seeded_sample(keyed, 2)
    per_op = Counter(m.operator for m in keyed.values())
    assert Counter(m.operator for m in sample.values()) == {op: min(2, n)
                                                            for op, n in per_op.items()}
    fewer = {k: m for i, (k, m) in enumerate(keyed.items()) if k in sample or i % 3}
    assert seeded_sample(fewer, 2) == sample
    assert seeded_sample(keyed, 2, seed="other") != sample


def test_causes_name_the_issue_class():
    from tools.mutation.causes import cause_of
    row = {"operator": "operand_tensor", "before": "x", "after": "y", "new_warnings": []}
    assert cause_of(row).issue_class == 1
    reset = dict(row, operator="drop_stmt", before="assign(acc, 0.0)", after="pass")
    assert cause_of(reset).label == "an accumulator never reset"
    other = dict(row, operator="coord_offset", target="copy", line=3, verifier_errors=[])
    assert cause_of(other).label == "coord_offset: unexplained"
    assert cause_of(dict(other, new_warnings=["tag.not-modelled at line 3"])).issue_class == 2


def test_the_report_lists_counts_causes_and_each_failure_with_its_diff():
    from tools.mutation.soundness_md import render
    m = _copy_mutant("pass")
    row = dict(m.to_json(), key="copy:drop_stmt:store(dst, x) -> pass#0", **{"class":
               VERIFIED_WRONG}, verdict="verified", verifier_errors=[], verifier_warnings=[],
               runs=[{"shapes": {"M": 128, "N": 192}, "outcome": "wrong", "detail": "Y off"}],
               check_seconds=0.1, run_seconds=0.2, seconds=0.3, same_ir_as=None,
               new_warnings=[], evidence="wrong at M=128,N=192: Y off", message="",
               cause="the output's store dropped", issue_class=3,
               diff=unified_diff(COPY.source(), m.source, COPY.path))
    ok = dict(row, id="copy-001", **{"class": CAUGHT}, runs=[])
    report = {"targets": {"copy": {"file": COPY.path, "kernel": "copy", "overrides": {},
                                   "shapes": list(COPY.all_shapes), "seconds": 1.0}},
              "mutants": [row, ok]}
    text = render(report)
    assert "| mutants | 2 |" in text and "| **verified but wrong** " in text
    assert "Failures (verified but wrong or interpreter error): **1**." in text
    assert "\n-    store(dst, x)\n+    pass\n" in text
    assert "| 3 | the output's store dropped | 1 | 0 | `copy-000` |" in text


def test_the_committed_full_report_is_complete():
    path = ROOT / "benchmarks" / "results" / "soundness-report.json"
    report = json.loads(path.read_text())
    rows = report["mutants"]
    assert not report.get("sample") and len(rows) >= 2000
    assert set(report["targets"]) == set(TARGETS)
    # an unverified baseline (the router: its value arithmetic is not proved) is fuzzed too
    assert all(t["baseline"] in (VERIFIED_CORRECT, UNVERIFIED)
               for t in report["targets"].values())
    assert {r["class"] for r in rows} <= set(CLASSES) and len({r["key"] for r in rows}) == len(rows)
    for r in rows:
        if r["class"] in FAILURES:
            assert r["diff"].startswith("--- a/") and r["evidence"] and r["cause"], r["id"]
        if r["class"] in (VERIFIED_CORRECT,) + FAILURES and not r["same_ir_as"]:
            assert r["runs"], r["id"]
    text = (ROOT / "docs" / "soundness-report.md").read_text()
    assert f"| mutants | {len(rows)} |" in text
