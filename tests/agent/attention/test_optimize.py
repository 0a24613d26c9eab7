"""One attention episode: on the CPU the cost model's best goes into the tuned cache as a
prediction, a measured (GPU) best as a measurement a prediction never replaces
(tests/ops/test_attention_tuned.py: how the op reads it)."""
import json

import pytest

from argus.agent.attention.optimize import choose_evaluator, run_episode
from argus.agent.attention.space import AttentionSpace
from argus.agent.attention.task import AttentionTask
from argus.agent.evaluators.base import EvaluatorUnavailable, Outcome
from argus.agent.planner import Budget
from argus.ops import attention_tuned

TASK = AttentionTask(4, 16, 16, 4096, 4096, 128, causal=True)


@pytest.fixture(autouse=True)
def cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ARGUS_ATTENTION_CONFIG", raising=False)
    attention_tuned.forget()
    yield tmp_path
    attention_tuned.forget()


class Measured:
    name = "fake-gpu"
    device_name = "NVIDIA H200"

    def evaluate(self, cfg, task):
        return Outcome("ok", time_ms=1.0 if cfg.BN == 64 else 2.0, tflops=1.0, source="gpu")


def key(gpu="NVIDIA H200"):
    return attention_tuned.entry_key(gpu, "bf16", "bhsd", 4, 16, 16, 4096, 4096, 128, True)


def test_a_cpu_episode_records_a_prediction(tmp_path):
    run = run_episode(TASK, evaluator="cpu", budget=Budget(evaluations=3),
                      out_dir=tmp_path / "out", space=AttentionSpace(build_check=False))
    s = run["summary"]
    assert s["best"]["basis"] == "predicted" and s["tune_cache_key"] == key()
    entry = json.loads(attention_tuned.default_path().read_text())["entries"][key()]
    assert entry["basis"] == "predicted" and entry["knobs"] == s["best"]["config"]
    assert attention_tuned.tuned_knobs(key()) == s["best"]["config"]
    written = json.loads((tmp_path / "out" / "trajectory.json").read_text())
    assert len(written["steps"]) == 3 and written["best"]["config"] == s["best"]["config"]


def test_a_measured_best_is_kept_over_later_predictions():
    space = AttentionSpace(build_check=False)
    gpu = run_episode(TASK, chosen=Measured(), budget=Budget(evaluations=4), space=space)
    assert gpu["summary"]["best"]["basis"] == "measured"
    assert gpu["summary"]["best"]["config"]["BN"] == 64
    cpu = run_episode(TASK, evaluator="cpu", budget=Budget(evaluations=2), space=space)
    assert "kept the measured entry" in cpu["summary"]["tune_cache_note"]
    assert attention_tuned.tuned_knobs(key())["BN"] == 64


def test_the_gpu_evaluator_off_a_gpu_is_unavailable(monkeypatch):
    from argus.agent.attention import evaluators
    monkeypatch.setattr(evaluators, "cuda_available", lambda: False)
    with pytest.raises(EvaluatorUnavailable, match="needs a CUDA GPU"):
        choose_evaluator("gpu", AttentionSpace(build_check=False))
    chosen, note = choose_evaluator("auto", AttentionSpace(build_check=False))
    assert chosen.name.startswith("cpu") and "timings need one" in note
