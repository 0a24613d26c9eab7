"""One optimisation episode end to end: pick the evaluator and provider, run the ICRL
planner (resuming from the episode store when asked), write the outputs.

Shared by `argus optimize`, the MCP `optimize` tool and benchmarks/optimize_gemm.py.
A configuration measured fastest on the GPU also goes into the autotuning cache that
argus.ops.matmul reads (argus/ops/tune_cache.py), so the next matmul of that shape class
runs it.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from argus.agent.episodes import EpisodeStore
from argus.agent.evaluators import CpuEvaluator, GpuEvaluator
from argus.agent.evaluators import gpu as gpu_eval
from argus.agent.evaluators.base import EvaluatorUnavailable
from argus.agent.gemm_config import GemmConfig
from argus.agent.planner import Budget, IcrlPlanner, RunResult, default_start
from argus.agent.providers import ProviderConfig, make_provider
from argus.agent.report import summary, write_outputs
from argus.agent.task import GemmTask

EVALUATORS = ("auto", "cpu", "gpu")


def choose_evaluator(kind: str, benchmark: Callable | None = None):
    """(evaluator, note). 'auto' takes the GPU only when CUDA and argus.ops.matmul exist."""
    if kind not in EVALUATORS:
        raise EvaluatorUnavailable(f"evaluator {kind!r} is unknown; use one of {EVALUATORS}")
    if kind == "cpu":
        return CpuEvaluator(), "cost model (CPU)"
    if kind == "gpu" or benchmark is not None:
        evaluator = GpuEvaluator(benchmark)
        if benchmark is None:
            evaluator.ensure_ready()            # fail now, not at step 1
        return evaluator, "measured on the GPU"
    if not gpu_eval.cuda_available():
        return CpuEvaluator(), "cost model (CPU): no CUDA GPU here"
    ok, why = gpu_eval.backend_available()
    if not ok:
        return CpuEvaluator(), f"cost model (CPU): {why}"
    return GpuEvaluator(), "measured on the GPU"


def run_episode(task: GemmTask, provider_config: ProviderConfig, *, evaluator: str = "auto",
                budget: Budget | None = None, start: GemmConfig | None = None,
                out_dir: str | Path | None = None, db: str | Path | None = None,
                resume: bool = False, use_lessons: bool = True,
                on_step: Callable | None = None, benchmark: Callable | None = None,
                provider=None, keep_prompts: bool = False,
                tune_cache: bool = True) -> dict[str, Any]:
    chosen, note = choose_evaluator(evaluator, benchmark)
    start = start or default_start(task, getattr(chosen, "space", None))
    provider = provider or make_provider(provider_config)
    store = EpisodeStore(db) if db is not False else None
    episode, traj = (store.open_episode(task, provider_config.provider, chosen.name, start, resume)
                     if store else (None, None))
    lessons = store.lessons(task, chosen.name) if store and use_lessons else []

    def record(step, trajectory):
        if store:
            store.append(episode, step)
        if on_step:
            on_step(step, trajectory)

    work_dir = str(Path(out_dir) / "kernels") if out_dir else None   # coder-step kernels
    planner = IcrlPlanner(provider, chosen, task, start=start, budget=budget, lessons=lessons,
                          on_step=record, keep_prompts=keep_prompts, work_dir=work_dir)
    resumed = len(traj.steps) if traj else 0
    try:
        result: RunResult = planner.run(traj if traj and traj.steps else None)
        if store:
            store.finish(episode, result.trajectory)
    finally:
        if store:
            store.close()
    meta = {"provider": provider_config.provider, "model": getattr(provider, "model", ""),
            "provider_config": provider_config.public(), "evaluator": chosen.name,
            "evaluator_note": note, "resumed_steps": resumed, "lessons": lessons,
            "episode": episode, "db": str(store.path) if store else None}
    meta["tune_cache_key"] = record_best(task, result, chosen) if tune_cache else None
    paths = write_outputs(result, out_dir, meta) if out_dir else {}
    return {"result": result, "summary": summary(result, meta), "paths": paths}


TUNE_DTYPES = {"bfloat16": "bf16", "float16": "fp16"}


def record_best(task: GemmTask, result: RunResult, evaluator) -> str | None:
    """Write the best GPU-measured configuration into the tuning cache under this GPU, the
    task's dtype, the layout the GPU evaluator measures (x @ W, "kn") and the shape class;
    its key, or None when nothing was measured on a GPU or the library cannot run the
    configuration (the cost model's predictions never go in)."""
    best = result.trajectory.best()
    dtype = TUNE_DTYPES.get(task.dtype)
    if evaluator.name != "gpu" or best is None or best.config is None or dtype is None:
        return None
    from argus.ops.gemm_configs import knobs_to_config
    from argus.ops.tune_cache import TuneCache, entry_key
    from argus.runtime.launch_errors import LaunchError

    knobs = best.config.to_json()
    try:
        knobs_to_config(knobs, "kn", task.M, task.N, task.K)
    except LaunchError:
        return None
    key = entry_key(_gpu_name(evaluator), dtype, "kn", task.M, task.N, task.K)
    TuneCache().record(key, knobs, best.outcome.time_ms, "argus optimize")
    return key


def _gpu_name(evaluator) -> str:
    if gpu_eval.cuda_available():
        import torch
        return torch.cuda.get_device_name()
    return evaluator.device_name
