"""One episode of a kernel task end to end: the coder loop, then the outputs.

Writes to `out_dir`: best_kernel.py (the current best at the end), trajectory.json (every
step, with its feedback and estimate) and report.md. Shared by `argus optimize` for
attention, moe, FILE.py::KERNEL and --kernelbench.

A provider failure (an outage, a timeout, an HTTP error after the SDK's retries) pauses the
episode: trajectory.json says `"paused": true` and `resume=True` (the command's --resume,
with the same --out) continues it from its steps: the same current best, history and
last-step feedback, the candidates' files in <out>/kernels kept, the failed request asked
again.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from argus.agent.coding.kernel_planner import KernelPlanner, KernelRun, evaluator_note
from argus.agent.planner import Budget
from argus.agent.trajectory import Step
from argus.agent.providers import ProviderConfig, make_provider


class NeedsModel(ValueError):
    """A kernel task with the embedded planner, which only tunes GEMM knobs."""


class NothingToResume(ValueError):
    """--resume where no paused episode of this task is in the output folder."""


RESUME_HINT = ("the provider failed; the episode is paused: run the same command with "
               "--resume to continue it")


def paused_steps(task, out_dir) -> tuple[list[Step], list[list[int]]]:
    """The steps and request rounds of the paused episode of `task` in `out_dir`."""
    path = Path(out_dir) / "trajectory.json" if out_dir else None
    if path is None or not path.is_file():
        raise NothingToResume(f"--resume: no episode in {out_dir or '(no --out)'} to continue "
                              f"(trajectory.json is not there); run without --resume")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        steps = [Step.from_json(s) for s in data["steps"]]
    except (ValueError, KeyError, TypeError) as err:
        raise NothingToResume(f"--resume: {path} is not an episode's trajectory ({err})") \
            from None
    if data.get("task", {}).get("label") != task.describe().get("label"):
        raise NothingToResume(f"--resume: {path} is the episode of "
                              f"{data.get('task', {}).get('label')!r}, not of {task.label!r}")
    if not data.get("paused"):
        raise NothingToResume(f"--resume: the episode in {out_dir} is not paused (it stopped: "
                              f"{data.get('stop_reason')}); run without --resume for a new one")
    return steps, list(data.get("rounds") or [])


def run_kernel_episode(task, provider_config: ProviderConfig, *, budget: Budget | None = None,
                       out_dir: str | Path | None = None, samples: int = 1,
                       temperature: float = 0.0, max_tokens: int | None = None,
                       on_step=None, provider=None, keep_prompts: bool = False,
                       resume: bool = False, backend=None) -> dict[str, Any]:
    if provider is None and provider_config.provider == "embedded":
        raise NeedsModel(f"optimize {task.op}: the embedded planner tunes GEMM knobs only; a "
                         f"kernel task needs a model that writes kernels: pass --provider "
                         f"openai|anthropic with --model and --base-url (see docs/agent.md)")
    prior, rounds = paused_steps(task, out_dir) if resume else ([], [])
    provider = provider or make_provider(provider_config)
    work = str(Path(out_dir) / "kernels") if out_dir else None
    planner = KernelPlanner(provider, task, budget=budget, samples=samples,
                            temperature=temperature, max_tokens=max_tokens, work_dir=work,
                            on_step=on_step, keep_prompts=keep_prompts, backend=backend)
    run = planner.run(resume=prior, rounds=rounds)
    meta = {"provider": provider_config.provider, "model": getattr(provider, "model", ""),
            "evaluator": "gpu" if getattr(task, "device", "cpu") == "cuda" else
            "interpreter+cost-model", "evaluator_note": evaluator_note(task),
            "samples": samples, "temperature": temperature, "paused": run.paused,
            "parallel": backend.describe() if backend is not None else None,
            "resumed_steps": len([s for s in prior if s.technique != "provider-error"])}
    if run.paused:
        meta["resume_hint"] = RESUME_HINT
    paths = write_kernel_outputs(run, out_dir, meta) if out_dir else {}
    return {"result": run, "summary": kernel_summary(run, meta), "paths": paths}


def kernel_summary(run: KernelRun, meta: dict) -> dict[str, Any]:
    start = run.steps[0].outcome
    best = run.best
    return {"task": run.task.describe(), "stop_reason": run.stop_reason,
            "evaluations": run.evaluations, "steps": len(run.steps),
            "seconds": round(run.seconds, 3), "tokens": run.tokens,
            "best_step": best.index if best else None,
            "best_time_ms": best.outcome.time_ms if best else None,
            "start_status": start.status, "start_time_ms": start.time_ms,
            "speedup_over_start": (start.time_ms / best.outcome.time_ms
                                   if best and start.ok and best.outcome.time_ms else None),
            "baselines": run.task.baselines, "time_source": "cost model estimate (H200)",
            "meta": meta}


def write_kernel_outputs(run: KernelRun, out_dir, meta: dict) -> dict[str, str]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    if run.best is not None:
        paths["best_kernel"] = str(out / "best_kernel.py")
        Path(paths["best_kernel"]).write_text(run.best_source, encoding="utf-8")
    paths["trajectory"] = str(out / "trajectory.json")
    Path(paths["trajectory"]).write_text(json.dumps({**run.to_json(), "meta": meta}, indent=2),
                                         encoding="utf-8")
    paths["report"] = str(out / "report.md")
    Path(paths["report"]).write_text(report_text(run, meta), encoding="utf-8")
    return paths


def report_text(run: KernelRun, meta: dict) -> str:
    s = kernel_summary(run, meta)
    lines = [f"# argus optimize {run.task.label}", "",
             f"Planner: {meta['provider']} {meta.get('model') or ''}; {meta['samples']} "
             f"sample(s) per step at temperature {meta['temperature']}.",
             f"Evaluator: {meta['evaluator_note']}.", "",
             f"Stop: {run.stop_reason}; {run.evaluations} evaluations, {len(run.steps)} steps.",
             ""]
    if run.best is not None:
        lines.append(f"Best: step {run.best.index}, ESTIMATED {s['best_time_ms'] * 1e3:.2f} us"
                     + (f" ({s['speedup_over_start']:.2f}x the start)"
                        if s["speedup_over_start"] else ""))
    else:
        lines.append("Best: none (no candidate was correct)")
    for name, b in run.task.baselines.items():
        if b.get("time_ms"):
            lines.append(f"- {name}: {b['time_ms'] * 1e3:.2f} us ({b['source']})")
    lines += ["", "| step | technique | status | time (us, estimate) | reward |",
              "|---|---|---|---|---|"]
    for st in run.steps:
        t = f"{st.outcome.time_ms * 1e3:.2f}" if st.outcome.time_ms else "-"
        lines.append(f"| {st.index} | {st.technique} | {st.outcome.status} | {t} | "
                     f"{st.reward:.3f} |")
    return "\n".join(lines) + "\n"
