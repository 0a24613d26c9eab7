"""Cost estimates of an optimize_gemm run (argus/agent/run_estimate.py): the fit, the
calibration on a results file (the committed H200 run of 2026-12-02 among them), and the
run's own measurements taking over."""
import json
from pathlib import Path

import pytest

from argus.agent.run_estimate import (BUILT_IN, CostBook, EvalCost, calibrate, estimate_shape,
                                      fit, input_melems, measurements)
from argus.agent.task import parse_gemm_shape

# the first H200 run (2026-12-02, every evaluation in the full harness): the fit behind BUILT_IN
H200_RUN = Path(__file__).resolve().parent / "data" / "optimize_gemm-h200-20261202.json"
BIG = parse_gemm_shape("8192x8192x8192")


def test_fit_recovers_a_line_and_keeps_its_coefficients_non_negative():
    fixed, slope = fit([(10.0, 2.0 + 0.5 * 10), (40.0, 2.0 + 0.5 * 40), (20.0, 12.0)])
    assert fixed == pytest.approx(2.0) and slope == pytest.approx(0.5)
    assert fit([(5.0, 3.0), (5.0, 5.0), (5.0, 4.0)]) == (4.0, 0.0)        # one size: median
    assert fit([(1.0, 5.0), (2.0, 1.0)])[1] == 0.0                        # never negative
    fixed, slope = fit([(10.0, 1.0), (20.0, 3.0)])                       # would cross below 0
    assert fixed == 0.0 and slope > 0


def _record(*evaluations, measured=True):
    """A results file with one shape whose hand-picked entries took these (mode, seconds)."""
    hand = {f"h{i}": {"status": "ok", "details": {"benchmark": {"mode": mode,
                                                                "job_seconds": sec}}}
            for i, (mode, sec) in enumerate(evaluations)}
    hand["alias"] = {**hand["h0"], "same_as": "h0"}                 # counted once
    return {"measured": measured, "date": "D", "shapes": [
        {"shape": "4096x4096x4096", "hand_picked": hand,
         "retimed": {"evaluations": [{"mode": "full", "job_seconds": 6.0}]}}]}


def test_calibration_reads_each_mode_and_falls_back_to_the_built_in_models():
    record = _record(("search", 1.0), ("search", 1.2), (None, 5.0))
    points = measurements(record)
    assert [s for _, s in points["search"]] == [1.0, 1.2]
    assert sorted(s for _, s in points["full"]) == [5.0, 6.0]      # unlabelled = full harness
    models = calibrate(record)
    assert models["search"].seconds(BIG) == pytest.approx(1.1)
    assert "2 search-mode evaluations" in models["search"].source
    assert calibrate(_record(("full", 5.0)))["search"] is BUILT_IN["search"]
    assert calibrate(_record(("search", 1.0), measured=False)) == BUILT_IN   # predictions
    assert calibrate(None) == BUILT_IN


def test_the_built_in_full_model_is_the_fit_to_the_committed_h200_run():
    record = json.loads(H200_RUN.read_text())
    model = calibrate(record)["full"]
    assert model.fixed_s == pytest.approx(BUILT_IN["full"].fixed_s, abs=0.01)
    assert model.per_melem_s == pytest.approx(BUILT_IN["full"].per_melem_s, abs=0.001)
    measured = {}
    for shape in record["shapes"]:
        measured[shape["shape"]] = sorted(
            h["details"]["benchmark"]["job_seconds"] for h in shape["hand_picked"].values()
            if "same_as" not in h)
    for text, seconds in measured.items():                  # within 15% of each median
        median = seconds[len(seconds) // 2]
        assert model.seconds(parse_gemm_shape(text)) == pytest.approx(median, rel=0.15)


def test_the_book_prefers_this_runs_measurements_of_the_same_shape():
    book = CostBook({"search": EvalCost(1.0, 0.01, "prior"), "full": EvalCost(0.5, 0.2, "fit")})
    small = parse_gemm_shape("256x8192x8192")
    assert book.seconds("search", BIG) == pytest.approx(1.0 + 0.01 * input_melems(BIG))
    for s in (3.0, 5.0, 4.0):
        book.observe("search", BIG, s)
    assert book.seconds("search", BIG) == 4.0 and "3 measured" in book.source("search", BIG)
    assert book.seconds("search", small) == pytest.approx(1.0 + 0.01 * input_melems(small))
    est = estimate_shape(book, BIG, planner_evaluations=24, hand_evaluations=6)
    assert est.total_s == pytest.approx(30 * 4.0 + 4 * book.seconds("full", BIG))
    assert est.line().startswith("8192x8192x8192")
