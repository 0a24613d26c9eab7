"""benchmarks/optimize_gemm.py, the H200 check of issue 8, without a GPU: it refuses a
measured run where it cannot measure (exit 2), runs the whole measured procedure against a
stand-in GPU (hand-picked list, planner from the smallest valid configuration in the
library's space, ABBA re-timing, ratio, JSON and markdown report, table printed last), keeps
to its deadline by shrinking the planner's share (and says so), and dry-runs on the cost
model labelled as predictions."""
import importlib.util
import json
import time
from pathlib import Path

import pytest

from tests.agent.fake_verifier import FakeVerifier
from tests.agent.landscape import landscape

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "optimize_gemm.py"


@pytest.fixture
def script(monkeypatch):
    spec = importlib.util.spec_from_file_location("optimize_gemm_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "LibraryVerifier", lambda workers=0: FakeVerifier())
    monkeypatch.delenv("ARGUS_GEMM_CONFIG", raising=False)
    return module


class StandInSession:
    def __init__(self):
        self.starts = [{"seconds": 0.0, "why": "first job", "ok": True}]
        self.environment = {"device_name": "stand-in", "torch": "-"}


class StandInBenchmark:
    """What gpu_eval.default_benchmark returns, with the landscape's speeds."""

    def __init__(self, sleep_s=0.0):
        self.session, self.limit, self.closed = StandInSession(), None, False
        self.calls, self.sleep_s = [], sleep_s
        self.measure = landscape(calls=self.calls)

    def __call__(self, config, task, reps=None):
        time.sleep(self.sleep_s)
        return {**self.measure(config, task), "reps": reps}

    def close(self):
        self.closed = True


def _stand_in(monkeypatch, script, **kw):
    bench = StandInBenchmark(**kw)
    monkeypatch.setattr(script.gpu_eval, "default_benchmark", lambda timeout_s, reps: bench)
    return bench


def test_measured_run_needs_a_gpu(script, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(script.gpu_eval, "cuda_available", lambda: False)
    assert script.main(["--out", str(tmp_path / "r.json")]) == 2
    assert "needs a GPU" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_a_gemm_config_override_would_falsify_the_comparison(script, monkeypatch, tmp_path,
                                                            capsys):
    monkeypatch.setenv("ARGUS_GEMM_CONFIG", '{"BN": 128}')
    assert script.main(["--cost-model", "--out", str(tmp_path / "r.json")]) == 2
    assert "ARGUS_GEMM_CONFIG" in capsys.readouterr().err


def test_the_measured_procedure_on_a_stand_in_gpu(script, monkeypatch, tmp_path, capsys):
    bench = _stand_in(monkeypatch, script)
    out = tmp_path / "r.json"
    code = script.main(["--out", str(out)])
    record = json.loads(out.read_text())
    assert record["measured"] and [r["shape"] for r in record["shapes"]] == list(script.SHAPES)
    for r in record["shapes"]:
        assert set(r["hand_picked"]) == {"table", *script.HAND_WRITTEN}
        p = r["planner"]
        assert p["start_short"].startswith("64x64x64 S2 C1")        # smallest valid
        assert p["evaluations"] == 24 and p["within_default_budget"]
        assert p["stop_reason"] == "budget: evaluations"
        assert p["statuses"] == {"ok": 24}                            # nothing refused
        rt = r["retimed"]
        assert rt["ok"] and (rt["same_kernel"] or rt["order"] == ["planner", "hand", "hand",
                                                                   "planner"])
        assert r["ratio_to_best_hand_picked"] == pytest.approx(
            rt["planner_tflops"] / rt["hand_tflops"])
        assert r["passes"] == (r["ratio_to_best_hand_picked"] >= script.BAR)
        assert rt["torch_tflops"] > 0
    assert [c for c in bench.calls if c.stages < 2] == []             # verifier-rejected: never
    assert bench.closed
    assert code == (0 if record["all_pass"] else 1)
    report = out.with_suffix(".md").read_text()
    assert "Issue 8" in report and "| hand-picked |" in report and "Re-timed" in report
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-4].startswith("shape") and printed[-1].startswith("256x8192x8192")


def test_the_deadline_shrinks_the_planners_share_and_says_so(script, monkeypatch, tmp_path):
    _stand_in(monkeypatch, script, sleep_s=0.15)
    out = tmp_path / "r.json"
    began = time.monotonic()
    script.main(["--out", str(out), "--deadline", "9"])
    took = time.monotonic() - began
    record = json.loads(out.read_text())
    assert took < 9 + 3                      # every wait is bounded by what is left
    reasons = [r.get("planner", {}).get("stop_reason") or r.get("skipped")
               for r in record["shapes"]]
    assert any(r and ("seconds" in r or "time share" in r or "deadline" in r)
               for r in reasons), reasons
    for r in record["shapes"]:
        p = r.get("planner") or {}
        if p.get("budget", {}).get("seconds") is not None:
            assert p["budget"]["seconds"] < script.DEFAULT_SECONDS
        if "evaluations" in p:
            assert p["evaluations"] <= script.DEFAULT_EVALUATIONS
    assert record["all_pass"] is False or all(r.get("passes") for r in record["shapes"])


def test_cost_model_dry_run_writes_a_labelled_report(script, tmp_path):
    out = tmp_path / "r.json"
    code = script.main(["--cost-model", "--shape", "4096x4096x4096", "--budget", "8",
                        "--out", str(out)])
    record = json.loads(out.read_text())
    assert record["measured"] is False and "NOT measurements" in record["evaluator"]
    [shape] = record["shapes"]
    assert shape["best_hand_picked"] in shape["hand_picked"]
    assert shape["planner"]["evaluations"] == 8
    assert shape["planner"]["steps"][0]["config"] == shape["planner"]["start"]
    assert record["space"]["BM"] == [64, 128] and record["space"]["raster"] == ["m"]
    assert code == (0 if shape["passes"] else 1)
    assert "PREDICTIONS" in out.with_suffix(".md").read_text()


def test_merge_keeps_the_other_shapes(script, tmp_path):
    out = tmp_path / "r.json"
    for shape in ("4096x4096x4096", "256x8192x8192"):
        script.main(["--cost-model", "--shape", shape, "--budget", "3", "--out", str(out),
                     "--merge"])
    script.main(["--cost-model", "--shape", "4096x4096x4096", "--budget", "4", "--out",
                 str(out), "--merge"])
    record = json.loads(out.read_text())
    assert [r["shape"] for r in record["shapes"]] == ["256x8192x8192", "4096x4096x4096"]
    assert record["shapes"][1]["planner"]["evaluations"] == 4
    assert record["all_pass"] == all(r["passes"] for r in record["shapes"])


def test_without_z3_the_run_stops_and_says_what_to_install(script, monkeypatch, tmp_path,
                                                          capsys):
    from argus.agent.library_verifier import LibraryVerifier

    monkeypatch.setattr(script, "LibraryVerifier", LibraryVerifier)
    monkeypatch.setattr("argus.agent.library_verifier.verify_spec",
                        lambda spec: {"errors": [], "missing": ["protocol"], "seconds": 0.0})
    _stand_in(monkeypatch, script)
    assert script.main(["--out", str(tmp_path / "r.json")]) == 2
    assert "z3-solver" in capsys.readouterr().err
