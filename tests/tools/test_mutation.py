"""Mutation testing of the verifier (tools/mutation): the operators make the edits
they promise and nothing else, known mutants land in the right class, and the
classification and report logic on stubbed observations."""

from __future__ import annotations

import ast

import pytest

from tools.mutation import classify, generate_mutants
from tools.mutation.classify import (EQUIVALENT, FLAGGED_CORRECT, FRONTEND_CRASH,
                                     KILLED, MISSED, REJECTED, VERIFIER_CRASH,
                                     Observation, RunOutcome)
from tools.mutation.edit import Edit
from tools.mutation.report import render_markdown, unexplained_missed
from tools.mutation.runner import observe
from tools.mutation.targets import TARGETS

ONE_RUN = (("value", 0),)


@pytest.fixture(scope="module")
def gemm_mutants():
    return generate_mutants(TARGETS["gemm"])


def _afters(mutants, operator):
    return {m.after for m in mutants if m.operator == operator}


def test_parity_operator_drops_and_shifts_the_phase(gemm_mutants):
    afters = _afters(gemm_mutants, "parity")
    assert "wait(empty[s], (g // S & 1))" in afters           # `^ 1` dropped
    assert "wait(full[s], (g & 1))" in afters                 # (g // S) & 1 -> g & 1
    assert "wait(full[s], (k // S & 1))" in afters            # the inner loop's k
    assert "wait(full[s], (g // S + 1 & 1))" in afters        # phase + 1


def test_stage_layout_drop_and_count_operators(gemm_mutants):
    assert "s = ((g + 1) % S)" in _afters(gemm_mutants, "stage_index")
    assert "s = (g % (S - 1))" in _afters(gemm_mutants, "stage_index")
    assert any("swizzle='64B'" in a for a in _afters(gemm_mutants, "layout"))
    assert "mbarrier_init(empty[s], 3)" in _afters(gemm_mutants, "barrier_count")
    assert "full = mbarrier((S - 1))" in _afters(gemm_mutants, "stage_count")
    drops = [m for m in gemm_mutants if m.operator == "drop_stmt"]
    assert {m.before for m in drops if m.after == "pass"} >= {
        "wgmma_wait(0)", "fence_mbarrier_init()", "arrive(empty[s])", "wgmma_fence()"}
    # unwrapping `with elect_one():` keeps its body, one level out
    unwrap = [m for m in drops if m.before == "with elect_one():"]
    assert unwrap and all("with elect_one():" not in m.source.splitlines()[m.line - 1]
                          for m in unwrap)


def test_coordinate_operators(gemm_mutants):
    assert "tma_load(a_s[s], tile(A, (BM, BK), (k, tm)), full[s])" in \
        _afters(gemm_mutants, "coord_swap")
    assert "tma_load(b_s[s], tile(B, (BN, BK), (tn, (k + 1))), full[s])" in \
        _afters(gemm_mutants, "coord_offset")
    assert "tma_load(b_s[s], tile(B, (BN, BK), (tm, k)), full[s])" in \
        _afters(gemm_mutants, "coord_name")


def test_each_mutant_is_one_edit_of_one_line_and_parses_as_python(gemm_mutants):
    original = TARGETS["gemm"].source().splitlines()
    assert len({m.id for m in gemm_mutants}) == len(gemm_mutants) >= 100
    assert len({m.source for m in gemm_mutants}) == len(gemm_mutants)
    for m in gemm_mutants:
        ast.parse(m.source)
        lines = m.source.splitlines()
        if m.before.startswith("with elect_one("):
            continue          # unwrapping re-indents the body
        if m.operator == "sync_in_role":          # one line inserted
            assert lines[m.line - 1].strip() == "sync_block()" and \
                lines[:m.line - 1] + lines[m.line:] == original, m
            continue
        if m.operator == "step_guard":            # the line put under an if: one added
            assert lines[m.line - 1].strip().startswith("if ") and \
                lines[m.line].strip() == original[m.line - 1].strip() and \
                lines[:m.line - 1] + lines[m.line + 1:] == original[:m.line - 1] + \
                original[m.line:], m
            continue
        if m.operator == "walk_order" and m.after.startswith("for ") and \
                "schedule(" not in m.after:       # two loop headers swapped
            def same(ls):      # the same lines, re-indented (ast.unparse quotes with ')
                return sorted(ln.strip().replace('"', "'") for ln in ls)
            assert same(lines) == same(original), m
            continue
        assert len(lines) == len(original)
        changed = [i for i, (a, b) in enumerate(zip(original, lines)) if a != b]
        assert len(changed) == 1 and changed[0] + 1 == m.line, m


def test_specification_calls_are_never_mutated(gemm_mutants):
    for m in gemm_mutants:
        assert "tag_assert" not in m.before and "assume" not in m.before, m


def test_edit_replaces_exactly_the_span():
    src = "a = 1\nb = f(x, y)\nc = 3\n"
    assert Edit(2, 6, 2, 7, "z").apply(src) == "a = 1\nb = f(z, y)\nc = 3\n"
    body = "with e():\n    f()\n    g()\nh()\n"
    assert Edit(1, 0, 3, 0, "", dedent=4).apply(body) == "f()\ng()\nh()\n"


def test_flash_attention_gets_reduction_mutants():
    afters = _afters(generate_mutants(TARGETS["flash_fwd"]), "reduction")
    assert "m_new = maximum(m_i, row_sum(masked))" in afters
    assert "m_new = row_max(masked)" in afters
    assert "p = exp2(masked - m_i)" in afters


def _mutant(target, after):
    return next(m for m in generate_mutants(TARGETS[target]) if m.after == after)


def test_unmutated_gemm_is_equivalent():
    assert classify(observe(TARGETS["gemm"], TARGETS["gemm"].source(), ONE_RUN)) == EQUIVALENT


def test_parity_flip_is_flagged_and_deadlocks():
    m = _mutant("gemm", "wait(full[s], (g & 1))")
    obs = observe(TARGETS["gemm"], m.source, ONE_RUN)
    assert any(e.startswith("protocol.parity") for e in obs.verifier_errors)
    assert obs.runs[0].outcome == "deadlock"
    assert classify(obs) == KILLED


def test_swapped_copy_coordinates_are_flagged_and_wrong():
    m = _mutant("copy", "src = tile(X, (BM, BN), (tn, tm))")
    obs = observe(TARGETS["copy"], m.source, ONE_RUN)
    assert obs.verifier_errors and obs.runs[0].outcome in ("wrong", "error")
    assert classify(obs) == KILLED


def test_frontend_rejection_is_recorded_with_its_message():
    src = TARGETS["copy"].source().replace('load(src, "blocked")', 'load(src, "no_such")')
    obs = observe(TARGETS["copy"], src, ONE_RUN)
    assert obs.frontend == "rejected" and "examples/copy.py:" in obs.frontend_message
    assert classify(obs) == REJECTED


def _obs(errors=(), outcomes=("correct",), **kw):
    return Observation(verifier_errors=list(errors),
                       runs=[RunOutcome("value", i, o) for i, o in enumerate(outcomes)], **kw)


def test_classification_of_stubbed_observations():
    assert classify(_obs(["protocol.parity"], ["deadlock", "correct"])) == KILLED
    assert classify(_obs(["tag.wgmma-k"], ["correct", "correct"])) == FLAGGED_CORRECT
    assert classify(_obs([], ["correct", "wrong"])) == MISSED
    assert classify(_obs([], ["correct", "correct", "correct"])) == EQUIVALENT
    assert classify(Observation(frontend="rejected")) == REJECTED
    assert classify(Observation(frontend="crash")) == FRONTEND_CRASH
    assert classify(_obs([], ["wrong"], verifier_crash="KeyError")) == VERIFIER_CRASH
    with pytest.raises(ValueError):
        classify(_obs([], []))


def test_report_lists_missed_bugs_and_flags_unexplained_ones():
    row = {"id": "x-000", "target": "x", "operator": "drop_stmt", "file": "k.py", "line": 3,
           "before": "foo()", "after": "pass", "class": MISSED, "verifier_errors": [],
           "frontend_message": "", "runs": [{"mode": "value", "seed": 0, "outcome": "wrong",
                                             "detail": "Y off"}]}
    report = {"date": "d", "commit": "c", "seconds": 1, "jobs": 1, "mutants": [row],
              "targets": {"x": {"file": "k.py", "kernel": "x", "shapes": {}, "overrides": {}}}}
    assert unexplained_missed(report) == [row]
    text = render_markdown(report)
    assert "`x-000` drop_stmt at k.py:3" in text and "UNEXPLAINED" in text
    assert "| x | 1 |" in text


def test_explanations_name_the_documented_limit_and_leave_others_unexplained():
    from tools.mutation.explain import explain
    base = {"operator": "drop_stmt", "class": MISSED, "verifier_errors": [],
            "new_warnings": [], "line": 73}
    release = dict(base, target="gemm_nt", before="arrive(empty[(g - 1) % S])", after="pass")
    assert explain(release).kind == "not modelled (documented)"
    other = dict(base, target="copy", before="x = load(src, 'blocked')", after="pass")
    assert explain(other) is None
    alarm = dict(base, target="gemm", operator="stage_count", before="full = mbarrier(S)",
                 after="full = mbarrier((S + 1))", **{"class": FLAGGED_CORRECT},
                 verifier_errors=["protocol.stage at k.py:3: ..."])
    assert explain(alarm).kind == "false alarm"


def test_committed_report_is_complete_and_every_missed_bug_is_explained():
    import json
    from pathlib import Path

    from tools.mutation.classify import CLASSES
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "mutation-report.json"
    report = json.loads(path.read_text())
    rows = report["mutants"]
    assert len(rows) >= 200 and {r["class"] for r in rows} <= set(CLASSES)
    assert len({r["id"] for r in rows}) == len(rows)
    assert all(t["baseline"] == EQUIVALENT for t in report["targets"].values())
    assert unexplained_missed(report) == []
