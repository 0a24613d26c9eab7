"""scripts/device_attention_planner.py's plumbing, as a dry run on the CPU (--evaluator
cpu: the cost model stands in for the GPU): phases B, A and C run for each shape, the JSON
is written with the fields the device run reports, and the planner's ratio against the
exhaustive best is computed from them (1.0 here: the planner's evaluator is the model)."""
import json
import runpy
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "device_attention_planner.py"


def test_dry_run_writes_every_shapes_result(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "planner.json"
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), "--evaluator", "cpu", "--no-build-probe",
                                      "--shapes", "2x4x4x512x512x64,1x8x2x1024x1024x128c",
                                      "--out", str(out), "--deadline-s", "600"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    assert done.value.code == 0
    data = json.loads(out.read_text())
    assert [r["shape"] for r in data["shapes"]] == ["2x4x4x512x512x64", "1x8x2x1024x1024x128c"]
    for row in data["shapes"]:
        assert row["exhaustive"]["complete"]
        assert row["exhaustive"]["timed"] == row["space"]["accepted"]
        assert row["planner"]["evaluations"] <= row["planner"]["budget"]["evaluations"]
        assert len(row["planner"]["candidates_tried"]) == row["planner"]["evaluations"]
        assert row["planner_ratio"] == pytest.approx(1.0) and row["meets_90"]
        assert row["planner"]["ops_reads_winner"]
        assert data["tuned_cache"][row["planner"]["tune_cache_key"]]["knobs"] == \
            row["planner"]["config"]
        assert row["hand_picked"]["best_name"] in row["hand_picked"]["rows"]
        assert row["retimed_ms"]["planner"] and row["planner_ratio_retimed"] == pytest.approx(1.0)
    assert "planner_ratio per shape: 1.000, 1.000" in capsys.readouterr().out
