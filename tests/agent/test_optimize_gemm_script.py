"""benchmarks/optimize_gemm.py: refuses a measured run without a GPU (exit 2, says why) and
runs the whole procedure on the cost model with --cost-model, labelled as predictions."""
import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "optimize_gemm.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("optimize_gemm_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_measured_run_needs_a_gpu(script, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(script.gpu_eval, "cuda_available", lambda: False)
    assert script.main(["--out", str(tmp_path / "r.json")]) == 2
    assert "needs a GPU" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_cost_model_dry_run_writes_a_labelled_report(script, tmp_path):
    out = tmp_path / "r.json"
    code = script.main(["--cost-model", "--shape", "4096x4096x4096", "--budget", "8",
                        "--out", str(out)])
    record = json.loads(out.read_text())
    assert record["measured"] is False and "NOT measurements" in record["evaluator"]
    [shape] = record["shapes"]
    assert shape["best_hand_picked"] in script.HAND_PICKED
    assert shape["planner"]["evaluations"] == 8
    assert shape["planner"]["steps"][0]["config"] == script.SMALLEST.to_json()
    ratio = shape["planner"]["best_tflops"] / shape["best_hand_picked_tflops"]
    assert shape["ratio_to_best_hand_picked"] == pytest.approx(ratio)
    assert code == (0 if ratio >= script.BAR else 1)


def test_merge_keeps_the_other_shapes(script, tmp_path):
    out = tmp_path / "r.json"
    for shape in ("4096x4096x4096", "4096x4096x14336"):
        script.main(["--cost-model", "--shape", shape, "--budget", "3", "--out", str(out),
                     "--merge"])
    script.main(["--cost-model", "--shape", "4096x4096x4096", "--budget", "4", "--out",
                 str(out), "--merge"])
    record = json.loads(out.read_text())
    assert [r["shape"] for r in record["shapes"]] == ["4096x4096x14336", "4096x4096x4096"]
    assert record["shapes"][1]["planner"]["evaluations"] == 4
    assert record["all_pass"] == all(r["passes"] for r in record["shapes"])
