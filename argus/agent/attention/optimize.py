"""One attention planning episode end to end: the evaluator (the GPU when CUDA is here,
else the cost model), the planner's run over the library's space, the outputs, the cache.

The run's best goes into the tuned cache argus.ops.attention reads
(argus/ops/attention_tuned.py): measured on the GPU as a measurement (the next call of that
shape class runs it), predicted on the CPU as a prediction (used only where nothing measured
says otherwise). Writes best_config.json and trajectory.json to `out_dir`.
"""
from __future__ import annotations

import json
from pathlib import Path

from argus.agent.attention.evaluators import (CpuAttentionEvaluator, GpuAttentionEvaluator,
                                              cuda_available)
from argus.agent.attention.planner import AttentionRun, default_budget, run_planner
from argus.agent.attention.space import AttentionSpace, describe_space
from argus.agent.attention.task import AttentionTask
from argus.agent.evaluators.base import EvaluatorUnavailable

EVALUATORS = ("auto", "cpu", "gpu")


def choose_evaluator(kind: str, space: AttentionSpace):
    """(evaluator, note)."""
    if kind not in EVALUATORS:
        raise EvaluatorUnavailable(f"evaluator {kind!r} is unknown; use one of {EVALUATORS}")
    if kind == "cpu" or (kind == "auto" and not cuda_available()):
        why = "" if kind == "cpu" else ": no CUDA GPU here, timings need one"
        return CpuAttentionEvaluator(space), f"cost model (CPU), a ranking, not timings{why}"
    return GpuAttentionEvaluator(space), "measured on the GPU"


def gpu_name(evaluator) -> str:
    if isinstance(evaluator, GpuAttentionEvaluator):
        return evaluator.device_name
    return "NVIDIA H200"           # the GPU the cost model models


def record_best(run: AttentionRun, evaluator) -> tuple[str | None, str]:
    """(the cache key the best went in under, a note)."""
    from argus.ops import attention_tuned

    best = run.best()
    if best is None:
        return None, "nothing written: no configuration passed"
    t = run.task
    key = attention_tuned.entry_key(gpu_name(evaluator), t.dtype, t.layout, t.b, t.hq, t.hk,
                                    t.sq, t.sk, t.d, t.causal)
    measured = best.outcome.source == "gpu"
    written = attention_tuned.record(
        key, best.config.to_json(), best.outcome.time_ms if measured else None,
        "argus optimize attention", "measured" if measured else "predicted",
        None if measured else best.outcome.time_ms)
    if not written:
        return key, "kept the measured entry already there (a prediction never replaces one)"
    return key, f"written as {'measured' if measured else 'predicted'}"


def run_episode(task: AttentionTask, *, evaluator: str = "auto", budget=None,
                out_dir: str | Path | None = None, tune_cache: bool = True,
                space: AttentionSpace | None = None, on_step=None,
                chosen=None, close: bool = True) -> dict:
    """`chosen`: an evaluator to use instead of choosing one (the device script shares one
    GPU worker over its phases); `close`: end it afterwards."""
    space = space or AttentionSpace()
    note = "given"
    if chosen is None:
        chosen, note = choose_evaluator(evaluator, space)
    budget = budget or default_budget()
    try:
        run = run_planner(chosen, task, space, budget, on_step=on_step)
    finally:
        if close and hasattr(chosen, "close"):
            chosen.close()
    key, cache_note = record_best(run, chosen) if tune_cache else (None, "not asked")
    start, best = run.steps[0], run.best()
    summary = {
        "task": task.describe(), "evaluator": getattr(chosen, "name", "?"),
        "evaluator_note": note, "stop_reason": run.stop_reason,
        "evaluations": run.evaluations, "seconds": round(run.seconds, 2),
        "budget": run.budget, "build_check": space.build_check,
        "space": describe_space(space, task),
        "start": {"config": start.config.to_json(), "status": start.outcome.status,
                  "time_ms": start.outcome.time_ms},
        "best": ({"config": best.config.to_json(), "time_ms": best.outcome.time_ms,
                  "tflops": best.outcome.tflops, "step": best.index,
                  "basis": "measured" if best.outcome.source == "gpu" else "predicted"}
                 if best else None),
        "speedup_over_start": (start.outcome.time_ms / best.outcome.time_ms
                               if best and start.outcome.ok else None),
        "tune_cache_key": key, "tune_cache_note": cache_note,
    }
    paths = {}
    if out_dir:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths["trajectory"] = str(out / "trajectory.json")
        Path(paths["trajectory"]).write_text(json.dumps(run.to_json(), indent=1, default=str))
        paths["best_config"] = str(out / "best_config.json")
        Path(paths["best_config"]).write_text(json.dumps(summary, indent=1, default=str))
    return {"run": run, "summary": summary, "paths": paths}
