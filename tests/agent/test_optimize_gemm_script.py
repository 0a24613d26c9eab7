"""benchmarks/optimize_gemm.py, the H200 check of issue 8, without a GPU: it refuses a
measured run where it cannot measure (exit 2); runs the whole procedure against a stand-in
GPU (the planner first, in search mode, from the smallest valid configuration; the
hand-picked list in search mode, reusing what the planner measured; the ABBA re-timing in
full mode; JSON and markdown report, table printed last); keeps to its deadline, bounding
the hand-picked list and never starving the planner; merges per-shape runs into one report
(the criterion met only with all three shapes); estimates a run without running it; and
dry-runs on the cost model labelled as predictions."""
import importlib.util
import json
import shutil
import time
from pathlib import Path

import pytest

from argus.agent.gemm_check_report import FIRST_PROCEDURE, PROCEDURE
from argus.agent.run_estimate import EvalCost
from tests.agent.fake_verifier import FakeVerifier
from tests.agent.landscape import landscape

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "optimize_gemm.py"
# the first H200 run (2026-12-02 20:50 UTC, the older procedure), kept as it was committed
H200_RUN = ROOT / "tests" / "agent" / "data" / "optimize_gemm-h200-20261202.json"


@pytest.fixture
def script(monkeypatch):
    spec = importlib.util.spec_from_file_location("optimize_gemm_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "LibraryVerifier", lambda workers=0: FakeVerifier())
    monkeypatch.delenv("ARGUS_GEMM_CONFIG", raising=False)
    return module


def _costs(monkeypatch, search_s=0.001, full_s=0.001):
    """What the estimates assume one evaluation takes (the stand-in's sleeps)."""
    monkeypatch.setattr("argus.agent.run_estimate.BUILT_IN",
                        {"search": EvalCost(search_s, 0.0, "test"),
                         "full": EvalCost(full_s, 0.0, "test")})


class StandInSession:
    def __init__(self):
        self.starts = [{"seconds": 0.0, "why": "first job", "ok": True}]
        self.environment = {"device_name": "stand-in", "torch": "-"}


class StandInBenchmark:
    """What gpu_eval.default_benchmark returns, with the landscape's speeds; each call
    sleeps as long as its mode's evaluation is said to take."""

    def __init__(self, search_s=0.0, full_s=0.0):
        self.session, self.limit, self.closed = StandInSession(), None, False
        self.calls, self.sleep = [], {"search": search_s, "full": full_s}
        self.measure = landscape()

    def __call__(self, config, task, reps=None, mode=None, timeout_s=None):
        self.calls.append({"config": config, "task": task.shape_text, "mode": mode,
                           "reps": reps, "timeout_s": timeout_s, "limit": self.limit()})
        time.sleep(self.sleep[mode])
        return {**self.measure(config, task), "mode": mode, "job_seconds": self.sleep[mode]}

    def close(self):
        self.closed = True


def _stand_in(monkeypatch, script, **kw):
    bench = StandInBenchmark(**kw)
    monkeypatch.setattr(script.gpu_eval, "default_benchmark", lambda timeout_s, reps: bench)
    return bench


def _main(script, tmp_path, *args):
    return script.main(["--calibration", str(tmp_path / "none.json"), *args])


def test_measured_run_needs_a_gpu(script, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(script.gpu_eval, "cuda_available", lambda: False)
    assert _main(script, tmp_path, "--out", str(tmp_path / "r.json")) == 2
    assert "needs a GPU" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_a_gemm_config_override_would_falsify_the_comparison(script, monkeypatch, tmp_path,
                                                            capsys):
    monkeypatch.setenv("ARGUS_GEMM_CONFIG", '{"BN": 128}')
    assert script.main(["--cost-model", "--out", str(tmp_path / "r.json")]) == 2
    assert "ARGUS_GEMM_CONFIG" in capsys.readouterr().err


def test_the_measured_procedure_on_a_stand_in_gpu(script, monkeypatch, tmp_path):
    _costs(monkeypatch)
    bench = _stand_in(monkeypatch, script)
    out = tmp_path / "r.json"
    code = _main(script, tmp_path, "--out", str(out))
    record = json.loads(out.read_text())
    assert record["measured"] and [r["shape"] for r in record["shapes"]] == list(script.SHAPES)
    assert record["procedure"] == PROCEDURE
    for r in record["shapes"]:
        assert r["run"]["procedure"] == PROCEDURE and r["run"]["device"] == "stand-in"
        calls = [c for c in bench.calls if c["task"] == r["shape"]]
        search = [c for c in calls if c["mode"] == "search"]
        full = [c for c in calls if c["mode"] == "full"]
        p = r["planner"]
        assert p["start_short"].startswith("64x64x64 S2 C1")            # smallest valid
        assert search[0]["config"].to_json() == p["start"]               # the planner first
        assert p["evaluations"] == 24 and p["within_default_budget"]
        assert p["stop_reason"] == "budget: evaluations"
        assert p["statuses"] == {"ok": 24}                               # nothing refused
        hand = r["hand_picked"]
        assert set(hand) == {"table", *script.HAND_WRITTEN} and not r["hand_picked_cut"]
        measured_here = [h for h in hand.values() if "same_as" not in h and "measured_by" not in h]
        assert len(search) == p["evaluations"] + len(measured_here)      # no kernel twice
        rt = r["retimed"]
        assert rt["ok"] and (rt["same_kernel"] or rt["order"] == ["planner", "hand", "hand",
                                                                   "planner"])
        assert calls[-len(rt["order"]):] == full and len(full) == len(rt["order"])  # last
        assert all(c["reps"] == script.RETIME_REPS and c["timeout_s"] >= script.EVAL_TIMEOUT_S
                   for c in full)
        assert [e["mode"] for e in rt["evaluations"]] == ["full"] * len(full)
        assert r["ratio_to_best_hand_picked"] == pytest.approx(
            rt["planner_tflops"] / rt["hand_tflops"])
        assert r["passes"] == (r["ratio_to_best_hand_picked"] >= script.BAR)
        assert rt["torch_tflops"] > 0
    assert [c for c in bench.calls if c["config"].stages < 2] == []      # verifier-rejected
    assert bench.closed
    assert record["criterion_missing"] == []
    assert record["criterion_met"] == all(r["passes"] for r in record["shapes"])
    assert code == (0 if record["all_pass"] else 1)
    report = out.with_suffix(".md").read_text()
    assert "Issue 8" in report and "| hand-picked |" in report and "Re-timed (full harness)" in report
    assert "**search mode**" in report and "**full harness**" in report


def test_the_table_is_printed_last_and_the_estimate_first(script, monkeypatch, tmp_path,
                                                          capsys):
    _costs(monkeypatch)
    _stand_in(monkeypatch, script)
    _main(script, tmp_path, "--out", str(tmp_path / "r.json"), "--budget", "3")
    captured = capsys.readouterr()
    printed = captured.out.strip().splitlines()
    assert printed[-4].startswith("shape") and printed[-1].startswith("256x8192x8192")
    assert captured.err.startswith("estimate (test)")
    assert captured.err.index("estimate") < captured.err.index("4096x4096x4096: (")


def test_a_tight_share_bounds_the_hand_picked_list_and_never_starves_the_planner(
        script, monkeypatch, tmp_path):
    # the H200 run's failure, scaled down: the share cannot hold everything
    _costs(monkeypatch, search_s=0.1, full_s=0.1)
    _stand_in(monkeypatch, script, search_s=0.1, full_s=0.1)
    out = tmp_path / "r.json"
    began = time.monotonic()
    _main(script, tmp_path, "--out", str(out), "--shape", "4096x4096x4096", "--deadline", "3")
    took = time.monotonic() - began
    [r] = json.loads(out.read_text())["shapes"]
    plan, p, seconds = r.get("replan") or r["plan"], r["planner"], r["seconds"]
    assert not plan["fits"] and plan["planner_s"] > 1.5 * plan["hand_s"] > 0
    assert r["replan"]["search_s"] >= 0.1                             # measured, then planned
    # at least two evaluations: the planner ran (on a loaded 2-core machine, 3 to 8 fit)
    assert p["stop_reason"] == "budget: seconds" and p["evaluations"] >= 2
    assert p["seconds"] <= plan["planner_s"] + 0.1                   # its budget, kept
    assert seconds["hand_picked"] <= plan["hand_s"] + 0.3             # bounded (+ one eval)
    assert r["retimed"]["ok"] and seconds["retime"] < 0.4 * 1.5 + 0.3
    assert took < 3 + 1.5
    if r["hand_picked_cut"]:                                          # then no verdict
        assert not r["passes"] and "hand-picked" in r["why_not"]
        assert all(r["hand_picked"][n]["status"] == "not measured" for n in r["hand_picked_cut"])


def test_the_deadline_is_kept_and_a_shape_that_cannot_fit_is_not_started(
        script, monkeypatch, tmp_path):
    _costs(monkeypatch, search_s=0.05, full_s=0.5)
    _stand_in(monkeypatch, script, search_s=0.05, full_s=0.5)
    out = tmp_path / "r.json"
    began = time.monotonic()
    code = _main(script, tmp_path, "--out", str(out), "--deadline", "4")
    took = time.monotonic() - began
    record = json.loads(out.read_text())
    assert took < 4 + 2.5                    # every wait is bounded by what is left
    assert code == 1 and not record["criterion_met"]
    started = [r for r in record["shapes"] if "skipped" not in r]
    assert started
    for r in started:                        # a shape that starts runs its planner
        assert r["planner"]["evaluations"] >= 1 and "not started" not in r["planner"]["stop_reason"]
        assert r["planner"]["evaluations"] <= script.DEFAULT_EVALUATIONS
    for r in record["shapes"]:
        if "skipped" in r:
            assert "own call" in r["skipped"] and not r["passes"]
    assert "NOT RUN" in out.with_suffix(".md").read_text() or len(started) == 3


def test_per_shape_calls_merge_into_one_report(script, monkeypatch, tmp_path):
    _costs(monkeypatch)
    _stand_in(monkeypatch, script)
    out = tmp_path / "r.json"
    for shape in ("8192x8192x8192", "256x8192x8192"):
        _main(script, tmp_path, "--out", str(out), "--shape", shape, "--merge", "--budget", "4")
    record = json.loads(out.read_text())
    assert [r["shape"] for r in record["shapes"]] == ["8192x8192x8192", "256x8192x8192"]
    assert record["criterion_missing"] == ["4096x4096x4096"] and not record["criterion_met"]
    assert "4096x4096x4096 not measured yet" in out.with_suffix(".md").read_text()
    _main(script, tmp_path, "--out", str(out), "--shape", "4096x4096x4096", "--merge",
          "--budget", "4")
    record = json.loads(out.read_text())
    assert [r["shape"] for r in record["shapes"]] == list(script.SHAPES)    # canonical order
    assert record["criterion_missing"] == []
    assert record["criterion_met"] == all(r["passes"] for r in record["shapes"])
    assert all(r["run"]["procedure"] == PROCEDURE for r in record["shapes"])
    assert record["merged_from"]


def test_merging_into_the_first_h200_results_labels_the_older_shapes(script, monkeypatch,
                                                                     tmp_path):
    _costs(monkeypatch)
    _stand_in(monkeypatch, script)
    out = tmp_path / "r.json"
    shutil.copy(H200_RUN, out)
    first = json.loads(out.read_text())
    _main(script, tmp_path, "--out", str(out), "--shape", "8192x8192x8192", "--merge",
          "--budget", "4")
    record = json.loads(out.read_text())
    by_shape = {r["shape"]: r for r in record["shapes"]}
    assert list(by_shape) == list(script.SHAPES)
    assert by_shape["8192x8192x8192"]["run"]["procedure"] == PROCEDURE
    for shape in ("4096x4096x4096", "256x8192x8192"):
        assert by_shape[shape]["run"] == {"date": first["date"],
                                          "git": first["environment"]["git"],
                                          "device": "NVIDIA H200", "procedure": FIRST_PROCEDURE}
    assert not by_shape["256x8192x8192"]["passes"] and not record["criterion_met"]
    report = out.with_suffix(".md").read_text()
    assert FIRST_PROCEDURE in report and PROCEDURE in report


def test_combine_writes_per_shape_files_into_one(script, monkeypatch, tmp_path, capsys):
    _costs(monkeypatch)
    _stand_in(monkeypatch, script)
    parts = []
    for shape in ("256x8192x8192", "4096x4096x4096"):
        parts.append(tmp_path / f"{shape}.json")
        _main(script, tmp_path, "--out", str(parts[-1]), "--shape", shape, "--budget", "3")
    out = tmp_path / "all.json"
    code = script.main(["--combine", *map(str, parts), "--out", str(out)])
    record = json.loads(out.read_text())
    assert [r["shape"] for r in record["shapes"]] == ["4096x4096x4096", "256x8192x8192"]
    assert record["combined_from"] == list(map(str, parts))
    assert record["criterion_missing"] == ["8192x8192x8192"]
    assert code == (0 if record["all_pass"] else 1)
    cost = tmp_path / "cost.json"
    script.main(["--cost-model", "--shape", "4096x4096x4096", "--budget", "2", "--out", str(cost)])
    capsys.readouterr()
    assert script.main(["--combine", str(parts[0]), str(cost), "--out", str(out)]) == 2
    assert "mixes measured and cost-model" in capsys.readouterr().err


def test_estimate_prints_each_shape_and_runs_nothing(script, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(script.gpu_eval, "default_benchmark",
                        lambda **kw: pytest.fail("--estimate must not measure"))
    assert script.main(["--estimate"]) == 0          # calibrated on the committed results
    text = capsys.readouterr().out
    for shape in script.SHAPES:
        assert shape in text
    assert "total" in text
    assert script.main(["--estimate", "--calibration", str(H200_RUN)]) == 0
    text = capsys.readouterr().out
    for shape in script.SHAPES:
        assert shape in text
    assert "fit to 27 full-mode evaluations" in text and "PRIOR" in text and "total" in text
    calibration = tmp_path / "c.json"
    calibration.write_text(json.dumps({"measured": True, "date": "D", "shapes": [
        {"shape": "4096x4096x4096", "planner": {"steps": [
            {"outcome": {"details": {"benchmark": {"mode": "search", "job_seconds": 0.7}}}}]}}]}))
    assert script.main(["--estimate", "--calibration", str(calibration),
                        "--shape", "4096x4096x4096"]) == 0
    text = capsys.readouterr().out
    assert "fit to 1 search-mode evaluations" in text and "search   0.7 s" in text


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
    assert not record["criterion_met"]                       # predictions never meet it
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
    assert [r["shape"] for r in record["shapes"]] == ["4096x4096x4096", "256x8192x8192"]
    assert record["shapes"][0]["planner"]["evaluations"] == 4
    assert record["all_pass"] == all(r["passes"] for r in record["shapes"])


def test_without_z3_the_run_stops_and_says_what_to_install(script, monkeypatch, tmp_path,
                                                          capsys):
    from argus.agent.library_verifier import LibraryVerifier

    monkeypatch.setattr(script, "LibraryVerifier", LibraryVerifier)
    monkeypatch.setattr("argus.agent.library_verifier.verify_spec",
                        lambda spec: {"errors": [], "missing": ["protocol"], "seconds": 0.0})
    _costs(monkeypatch)
    _stand_in(monkeypatch, script)
    assert _main(script, tmp_path, "--out", str(tmp_path / "r.json")) == 2
    assert "z3-solver" in capsys.readouterr().err
