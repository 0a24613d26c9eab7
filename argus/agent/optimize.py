"""One optimisation episode end to end: pick the evaluator and provider, run the ICRL
planner (resuming from the episode store when asked), write the outputs.

Shared by `argus optimize`, the MCP `optimize` tool and benchmarks/optimize_gemm.py.
The run's best configuration goes into the tuning cache that argus.ops.matmul reads
(argus/ops/tune_cache.py): measured on the GPU, as a measurement (the next matmul of that
shape class runs it); predicted by the cost model in the library's space, as a prediction
(matmul takes it only where nothing measured says otherwise); a configuration the library
cannot run is not written, and the reason is in the summary and best_config.json.

A dtype the library has no kernel for is refused before anything runs. A provider outage
pauses the episode (its status stays resumable) instead of finishing it, and `resume=True`
continues it where it stopped. Verification (and, with `evaluate_many`, timing) jobs run
on the evaluation `backend` (argus.agent.parallel); the summary says which worker ran how
many.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from argus.agent.episodes import OUTAGE, EpisodeStore
from argus.agent.evaluators import CpuEvaluator, GpuEvaluator
from argus.agent.evaluators import gpu as gpu_eval
from argus.agent.evaluators.base import EvaluatorUnavailable
from argus.agent.gemm_config import GemmConfig
from argus.agent.planner import Budget, IcrlPlanner, RunResult, default_start
from argus.agent.providers import ProviderConfig, make_provider
from argus.agent.report import summary, write_outputs
from argus.agent.library_space import LibrarySpace
from argus.agent.library_verifier import LibraryVerifier
from argus.agent.library_results import (kernel_dtype_refusal, library_verdict,
                                         record_best as _record_best)
from argus.agent.task import GemmTask, TaskError

EVALUATORS = ("auto", "cpu", "gpu")
SPACES = ("library", "model")


def _cpu(space: str | None, backend) -> CpuEvaluator:
    if space == "library":
        return CpuEvaluator(LibrarySpace(verifier=LibraryVerifier(backend=backend)))
    return CpuEvaluator()


def choose_evaluator(kind: str, benchmark: Callable | None = None, space: str | None = None,
                     backend=None):
    """(evaluator, note). 'auto' takes the GPU only when CUDA and argus.ops.matmul exist.
    `space`: "library" (what argus.ops.matmul runs, its kernels verified on `backend`'s
    workers) or "model" (the cost model's whole knob table: CPU only); None: the library
    on the GPU, the model on the CPU."""
    if kind not in EVALUATORS:
        raise EvaluatorUnavailable(f"evaluator {kind!r} is unknown; use one of {EVALUATORS}")
    if space not in (None, *SPACES):
        raise EvaluatorUnavailable(f"space {space!r} is unknown; use one of {SPACES}")
    tag = " in the library's space" if space == "library" else ""
    if kind == "cpu":
        return _cpu(space, backend), f"cost model (CPU){tag}"
    if space == "model" and (kind == "gpu" or benchmark is not None):
        raise EvaluatorUnavailable("--space model is the cost model's knob table; the GPU "
                                   "measures only what the library runs (--space library)")

    def gpu() -> GpuEvaluator:
        if benchmark is not None:
            return GpuEvaluator(benchmark)
        return GpuEvaluator(space=LibrarySpace(verifier=LibraryVerifier(backend=backend)))

    if kind == "gpu" or benchmark is not None:
        evaluator = gpu()
        if benchmark is None:
            evaluator.ensure_ready()            # fail now, not at step 1
        return evaluator, "measured on the GPU"
    if not gpu_eval.cuda_available():
        return _cpu(space, backend), f"cost model (CPU){tag}: no CUDA GPU here"
    ok, why = gpu_eval.backend_available()
    if not ok:
        return _cpu(space, backend), f"cost model (CPU){tag}: {why}"
    return gpu(), "measured on the GPU"


def provider_outage(result: RunResult) -> bool:
    """The run stopped because the provider failed (the planner recorded its error as
    the last step): the episode is paused, not done."""
    steps = result.trajectory.steps
    return bool(steps) and steps[-1].technique == OUTAGE


def workers_report(backend, evaluator) -> dict[str, dict[str, int]]:
    """{worker: {"verify": n, "time": n}} over the run's backend and the verifier's own
    in-process work: the candidates each worker judged."""
    merged: dict[str, dict[str, int]] = {}
    verifier = getattr(getattr(evaluator, "space", None), "verifier", None)
    sources = [backend.workers() if backend is not None else {}]
    if hasattr(verifier, "in_process_tally"):
        sources.append(verifier.in_process_tally())
    for tally in sources:
        for worker, kinds in tally.items():
            into = merged.setdefault(worker, {"verify": 0, "time": 0})
            for kind, n in kinds.items():
                into[kind] = into.get(kind, 0) + n
    return dict(sorted(merged.items()))


def run_episode(task: GemmTask, provider_config: ProviderConfig, *, evaluator: str = "auto",
                budget: Budget | None = None, start: GemmConfig | None = None,
                out_dir: str | Path | None = None, db: str | Path | None = None,
                resume: bool = False, use_lessons: bool = True,
                on_step: Callable | None = None, benchmark: Callable | None = None,
                provider=None, keep_prompts: bool = False,
                tune_cache: bool = True, space: str | None = None,
                backend=None) -> dict[str, Any]:
    refusal = kernel_dtype_refusal(task)
    if refusal:
        raise TaskError(refusal)
    chosen, note = choose_evaluator(evaluator, benchmark, space, backend)
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
        paused = provider_outage(result)
        if store:
            (store.pause if paused else store.finish)(episode, result.trajectory)
    finally:
        if store:
            store.close()
    meta = {"provider": provider_config.provider, "model": getattr(provider, "model", ""),
            "provider_config": provider_config.public(), "evaluator": chosen.name,
            "evaluator_note": note, "resumed_steps": resumed, "lessons": lessons,
            "episode": episode, "db": str(store.path) if store else None}
    meta["paused"] = paused
    if paused:
        meta["resume_hint"] = ("the provider failed; the episode is paused: run the same "
                               "command with --resume to continue it")
    meta["library"] = library_verdict(task, result, chosen)
    meta["tune_cache_key"], meta["tune_cache_note"] = (
        _record_best(task, result, chosen, meta["library"], _gpu_name) if tune_cache
        else (None, "not asked"))
    meta["parallel"] = {**(backend.describe() if backend is not None else
                           {"backend": "in-process"}),
                        "workers": workers_report(backend, chosen)}
    paths = write_outputs(result, out_dir, meta) if out_dir else {}
    return {"result": result, "summary": summary(result, meta), "paths": paths}


def record_best(task: GemmTask, result: RunResult, evaluator) -> str | None:
    """The tuning-cache key the run's best went in under, or None (library_results)."""
    return _record_best(task, result, evaluator, None, _gpu_name)[0]


def _gpu_name(evaluator) -> str:
    if gpu_eval.cuda_available():
        import torch
        return torch.cuda.get_device_name()
    return evaluator.device_name
