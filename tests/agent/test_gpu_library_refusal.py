"""The GPU evaluator measuring the library GEMM refuses, in-process and at once, the
configurations argus.ops.matmul cannot run (knobs the DSL GEMM does not have), naming the
knob, so the planner's budget is not spent on child processes that fail."""

from dataclasses import replace

from argus.agent.evaluators import gpu as gpu_module
from argus.agent.evaluators.gpu import GpuEvaluator, library_refusal
from argus.agent.gemm_config import GemmConfig
from argus.agent.task import GemmTask


def _task():
    return GemmTask(M=4096, N=4096, K=4096)


def test_unsupported_knobs_are_refused_by_name_without_a_benchmark(monkeypatch):
    ran = []
    monkeypatch.setattr(gpu_module, "default_benchmark",
                        lambda: (lambda config, task: ran.append(config) or {}))
    cfg = replace(GemmConfig(), raster="n")
    outcome = GpuEvaluator().evaluate(cfg, _task())
    assert ran == []                     # refused before any measurement
    assert outcome.status == "compile_error"
    assert "raster='n'" in outcome.feedback


def test_supported_configuration_is_not_refused():
    cfg = replace(GemmConfig(), BM=128, BN=256, BK=64, stages=4, consumers=2,
                  warp_specialized=True, cluster_m=1, cluster_n=1, raster="m", group=8,
                  persistent=True, split_k=1, epilogue="direct")
    assert library_refusal(cfg, _task()) == ""


def test_a_custom_benchmark_is_not_second_guessed():
    seen = []

    def bench(config, task):
        seen.append(config)
        return {"status": "ok", "time_ms": 1.0}

    outcome = GpuEvaluator(bench).evaluate(replace(GemmConfig(), raster="n"), _task())
    assert seen and outcome.status != "compile_error"
