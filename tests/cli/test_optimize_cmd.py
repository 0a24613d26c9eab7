"""`argus optimize gemm --shape ...`: completes on a CPU with the embedded planner, writes
its outputs, resumes, refuses bad input with exit 2, and drives a configured provider."""
import json

import pytest

from argus.cli.main import main
from tests.agent.loopback import LoopbackLLM

PROVIDER_VARS = ("ARGUS_PROVIDER", "ARGUS_MODEL", "ARGUS_BASE_URL", "ARGUS_API_KEY",
                 "ARGUS_AGENT_CONFIG", "ARGUS_AGENT_DB", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for var in PROVIDER_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ARGUS_AGENT_DB", str(tmp_path / "default.sqlite"))
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path / "cache"))   # the tuning cache


def _optimize(tmp_path, *extra):
    return main(["optimize", "gemm", "--shape", "4096x4096x4096", "--evaluator", "cpu",
                 "--out", str(tmp_path / "out"), "--db", str(tmp_path / "ep.sqlite"), *extra])


def test_completes_on_a_cpu_and_writes_the_outputs(tmp_path, capsys):
    assert _optimize(tmp_path) == 0
    captured = capsys.readouterr()
    assert "[ 23]" in captured.err                      # one progress line per step
    assert "best:" in captured.out and "cost model (CPU)" in captured.out
    out = tmp_path / "out"
    trajectory = json.loads((out / "trajectory.json").read_text())
    best = json.loads((out / "best_config.json").read_text())
    ok = [s for s in trajectory["steps"] if s["outcome"]["status"] == "ok"]
    top = max(ok, key=lambda s: s["outcome"]["tflops"])
    assert best["config"] == top["config"] and best["tflops"] == top["outcome"]["tflops"]
    assert len(trajectory["steps"]) == 24 and trajectory["summary"]["evaluations"] == 24
    assert trajectory["summary"]["speedup_over_start"] > 2
    report = (out / "report.md").read_text()
    assert "| 23 |" in report and "predictions" in report
    assert (out / "reward.svg").read_text().startswith("<svg")


@pytest.mark.slow       # ~30 s; resume is also covered by tests/agent/test_episodes.py and test_episode_pause.py
def test_json_summary_and_resume(tmp_path, capsys):
    assert _optimize(tmp_path, "--budget", "3", "--json") == 0
    first = json.loads(capsys.readouterr().out)["summary"]
    assert first["evaluations"] == 3 and first["meta"]["resumed_steps"] == 0
    # A finished episode is not resumed: a new one starts (and learns from the old one).
    assert _optimize(tmp_path, "--budget", "3", "--json", "--resume") == 0
    second = json.loads(capsys.readouterr().out)["summary"]
    assert second["meta"]["episode"] != first["meta"]["episode"]


@pytest.mark.parametrize("argv,message", [
    (["optimize", "gemm", "--shape", "4096x4096"], "is not MxNxK"),
    (["optimize", "attention", "--shape", "1x1x1"], "is not B,HQ,HK,SQ,SK,D"),
    (["optimize", "attention", "--shape", "T=256"], "embedded planner tunes GEMM knobs only"),
    (["optimize", "--kernelbench", "no/such/problem.py"], "no such file"),
    (["optimize", "examples/copy.py"], "is not FILE.py::KERNEL"),
    (["optimize"], "name what to optimize"),
    (["optimize", "conv", "--shape", "1x1x1"], "unknown op"),
    (["optimize", "gemm", "--shape", "64x64x64", "--provider", "openai"], "needs a model"),
    (["optimize", "gemm", "--shape", "64x64x64", "--budget", "0"], "budget"),
    (["optimize", "gemm", "--shape", "64x64x64", "--dtype", "int4"], "not supported"),
])
def test_bad_input_is_a_one_line_usage_error(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_gpu_evaluator_off_gpu_is_a_usage_error(tmp_path, capsys, monkeypatch):
    from argus.agent.evaluators import gpu
    monkeypatch.setattr(gpu, "cuda_available", lambda: False)
    assert main(["optimize", "gemm", "--shape", "4096x4096x4096", "--evaluator", "gpu",
                 "--db", str(tmp_path / "db")]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


def test_a_configured_provider_runs_the_icrl_loop(tmp_path, monkeypatch, capsys):
    too_big = json.dumps({"technique": "deeper", "config": {"stages": 8, "BK": 128, "BM": 256,
                                                              "BN": 256}})
    good = json.dumps({"technique": "two-consumers",
                       "config": {"BM": 128, "BN": 256, "consumers": 2, "stages": 4,
                                  "warp_specialized": True}})
    with LoopbackLLM([too_big, good, '{"stop": true}']) as server:
        monkeypatch.setenv("ARGUS_PROVIDER", "openai")
        monkeypatch.setenv("ARGUS_MODEL", "loopback")
        monkeypatch.setenv("ARGUS_BASE_URL", server.root + "/v1")
        monkeypatch.setenv("ARGUS_MAX_RETRIES", "0")
        monkeypatch.setenv("ARGUS_PRICE_IN", "2.0")        # USD per million tokens
        monkeypatch.setenv("ARGUS_PRICE_OUT", "10.0")
        assert _optimize(tmp_path, "--json") == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["meta"]["provider"] == "openai" and summary["steps"] == 3
    assert summary["best_config"]["BN"] == 256
    # Usage from the loopback responses (prompt 100+n, completion 10+n for request n).
    assert summary["tokens"] == {"input": 101 + 102 + 103, "output": 11 + 12 + 13}
    assert summary["cost_usd"] == pytest.approx((306 * 2.0 + 36 * 10.0) / 1e6)
    prompts = server.user_prompts()
    assert "resource.smem" not in prompts[0] and "resource.smem" in prompts[1]


def test_a_shape_no_tile_divides_exits_1_and_says_why(tmp_path, capsys):
    assert main(["optimize", "gemm", "--shape", "100x100x100", "--evaluator", "cpu", "--quiet",
                 "--out", str(tmp_path / "o"), "--db", str(tmp_path / "db")]) == 1
    out = capsys.readouterr().out
    assert "best: none" in out and "M=100 is not a multiple of BM=64" in out
