"""The "time" job: one GEMM configuration measured on the worker's GPU.

`time_config({"benchmark": REF or None, "config": knobs, "task": task.describe()})` returns
the benchmark's result dict (status, time_ms, peer_time_ms, reasons), which the GPU
evaluator judges as it judges a measurement made in the driver (GpuEvaluator._judge).
The benchmark is made once per worker process and GPU and kept: with no REF the default
one (gpu.default_benchmark: a persistent harness child on this worker's GPU, which the
backend gave it alone), else the callable `benchmark(config, task)` REF names.
"""
from __future__ import annotations

import os
from typing import Any

from argus.agent.gemm_config import GemmConfig
from argus.agent.parallel.work import resolve
from argus.agent.task import GemmTask

_benchmarks: dict[tuple, Any] = {}


def task_from_json(data: dict) -> GemmTask:
    return GemmTask(int(data["M"]), int(data["N"]), int(data["K"]),
                    data.get("dtype", "bfloat16"), data.get("op", "gemm"))


def _benchmark(ref: str | None):
    key = (ref, os.environ.get("CUDA_VISIBLE_DEVICES"))
    if key not in _benchmarks:
        if ref is None:
            from argus.agent.evaluators.gpu import default_benchmark
            _benchmarks[key] = default_benchmark()
        else:
            _benchmarks[key] = resolve(ref)
    return _benchmarks[key]


def time_config(payload: dict) -> dict:
    bench = _benchmark(payload.get("benchmark"))
    return bench(GemmConfig(**payload["config"]), task_from_json(payload["task"]))
