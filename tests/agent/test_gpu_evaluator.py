import subprocess
import sys

import pytest

from argus.agent.evaluators import EvaluatorUnavailable, GpuEvaluator
from argus.agent.evaluators import gpu as gpu_module
from argus.agent.gemm_config import GemmConfig
from argus.agent.optimize import choose_evaluator

GOOD = GemmConfig(BM=128, BN=256, stages=4, consumers=2, warp_specialized=True)


def test_measured_time_becomes_tflops_and_ratio(task4k):
    calls = []

    def bench(config, task):
        calls.append(config)
        return {"status": "ok", "time_ms": 0.25, "peer_time_ms": 0.24}

    out = GpuEvaluator(bench).evaluate(GOOD, task4k)
    assert out.ok and out.source == "gpu"
    assert out.tflops == pytest.approx(task4k.flops / 0.25e-3 / 1e12)
    assert out.details["ratio_to_peer"] == pytest.approx(0.96)
    assert calls == [GOOD]


def test_static_checks_run_before_the_gpu(task4k):
    def bench(config, task):
        raise AssertionError("must not be called for an invalid config")

    out = GpuEvaluator(bench).evaluate(GemmConfig(BM=256, BN=256), task4k)
    assert out.status == "invalid" and out.source == "gpu"


def test_without_cuda_the_default_says_what_is_missing(monkeypatch, task4k):
    monkeypatch.setattr(gpu_module, "cuda_available", lambda: False)
    with pytest.raises(EvaluatorUnavailable, match="needs a CUDA GPU"):
        GpuEvaluator().evaluate(GOOD, task4k)
    with pytest.raises(EvaluatorUnavailable):
        choose_evaluator("gpu")
    evaluator, note = choose_evaluator("auto")
    assert evaluator.name == "cpu-cost-model" and "no CUDA" in note


def test_missing_backend_is_reported(monkeypatch, task4k):
    monkeypatch.setattr(gpu_module, "cuda_available", lambda: True)
    monkeypatch.setattr(gpu_module, "backend_available", lambda: (False, "argus.ops.matmul missing"))
    with pytest.raises(EvaluatorUnavailable, match="argus.ops.matmul missing"):
        gpu_module.default_benchmark()


def test_importing_the_agent_imports_no_gpu_backend_or_sdk():
    code = ("import sys, argus.agent.optimize, argus.agent.evaluators.gpu, argus.agent.tools; "
            "bad = [m for m in ('argus.ops', 'torch', 'openai', 'anthropic', 'mcp') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
