"""What `argus optimize` writes: the best configuration, the trajectory as JSON, a
markdown report, and an SVG plot of reward (and speed) by step."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from argus.agent.planner import RunResult


def summary(result: RunResult, meta: dict[str, Any]) -> dict[str, Any]:
    traj = result.trajectory
    best, start = traj.best(), traj.steps[0] if traj.steps else None
    prices = meta.get("provider_config") or {}
    cost = (result.tokens.get("input", 0) * prices.get("price_in", 0.0)
            + result.tokens.get("output", 0) * prices.get("price_out", 0.0)) / 1e6
    return {"meta": meta, "stop_reason": result.stop_reason, "evaluations": result.evaluations,
            "cost_usd": cost,
            "steps": len(traj.steps), "seconds": result.seconds, "tokens": result.tokens,
            "start_tflops": start.outcome.tflops if start else None,
            "best_tflops": best.outcome.tflops if best else None,
            "best_step": best.index if best else None,
            "best_config": best.config.to_json() if best else None,
            "best_kernel_step": kept.index if (kept := traj.best_kernel()) else None,
            "speedup_over_start": (best.outcome.tflops / start.outcome.tflops
                                   if best and start and start.outcome.ok else None)}


def markdown(result: RunResult, meta: dict[str, Any]) -> str:
    s = summary(result, meta)
    t = result.trajectory.task
    lines = [f"# argus optimize {t.op} {t.shape_text} ({t.dtype})", "",
             f"- provider: {meta.get('provider')}, evaluator: {meta.get('evaluator')}",
             f"- stop: {s['stop_reason']}; {s['evaluations']} evaluations, {s['steps']} steps, "
             f"{s['seconds']:.1f} s, tokens in/out {s['tokens'].get('input', 0)}/"
             f"{s['tokens'].get('output', 0)}, cost ${s['cost_usd']:.4f}",
             f"- start: {s['start_tflops'] or 0:.1f} TFLOP/s; best: {s['best_tflops'] or 0:.1f} "
             f"TFLOP/s at step {s['best_step']}"
             + (f" ({s['speedup_over_start']:.2f}x the start)" if s["speedup_over_start"] else ""),
             ""]
    if meta.get("evaluator", "").startswith("cpu"):
        lines += ["Speeds are the analytical cost model's predictions for an H200, not "
                  "measurements.", ""]
    lines += _library_lines(meta) + _worker_lines(meta)
    lines += ["| step | technique | status | TFLOP/s | reward | configuration |",
              "|---|---|---|---|---|---|"]
    for step in result.trajectory.steps:
        cfg = step.config.short() if step.config else "-"
        tf = f"{step.outcome.tflops:.1f}" if step.outcome.tflops else "-"
        status = step.outcome.status + (" (repeat)" if step.repeated else "")
        lines.append(f"| {step.index} | {step.technique} | {status} | {tf} | "
                     f"{step.reward:.3f} | `{cfg}` |")
    return "\n".join(lines) + "\n"


def _library_lines(meta: dict[str, Any]) -> list[str]:
    library = meta.get("library")
    if not library or library.get("basis") is None:
        return []
    verdict = ("accepted by argus.ops.matmul" if library["accepted"]
               else f"refused by argus.ops.matmul: {library['refusal']}")
    return [f"- best configuration: {verdict}; its speed is {library['basis']}"
            + (f" ({library['device']})" if library.get("device") else "")
            + f"; tuning cache: {meta.get('tune_cache_note', '-')}", ""]


def _worker_lines(meta: dict[str, Any]) -> list[str]:
    """The candidates each worker judged, for a run with a parallel backend."""
    parallel = meta.get("parallel") or {}
    workers = parallel.get("workers") or {}
    if not workers:
        return []
    lines = [f"Candidates per worker ({parallel.get('backend')} backend):", "",
             "| worker | verified | timed |", "|---|---|---|"]
    lines += [f"| {w} | {n.get('verify', 0)} | {n.get('time', 0)} |" for w, n in workers.items()]
    return lines + [""]


def reward_svg(result: RunResult, width: int = 640, height: int = 320) -> str:
    steps = result.trajectory.steps
    pad = 40
    n = max(len(steps) - 1, 1)
    best_so_far, running = [], 0.0
    for s in steps:
        running = max(running, s.outcome.tflops or 0.0) if s.outcome.ok else running
        best_so_far.append(running)
    top = max([s.reward for s in steps] + [1.0]) * 1.1
    tf_top = max(best_so_far + [1.0]) * 1.1

    def x(i):
        return pad + (width - 2 * pad) * i / n

    def y(v, scale):
        return height - pad - (height - 2 * pad) * v / scale

    dots = "".join(f'<circle cx="{x(i):.1f}" cy="{y(s.reward, top):.1f}" r="3" '
                   f'fill="{"#1f77b4" if s.outcome.ok else "#d62728"}"/>'
                   for i, s in enumerate(steps))
    line = " ".join(f"{x(i):.1f},{y(v, tf_top):.1f}" for i, v in enumerate(best_so_far))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">'
            f'<rect width="100%" height="100%" fill="white"/>'
            f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>'
            f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>'
            f'<line x1="{pad}" y1="{y(1.0, top):.1f}" x2="{width - pad}" y2="{y(1.0, top):.1f}" '
            f'stroke="#999" stroke-dasharray="4"/>'
            f'<polyline points="{line}" fill="none" stroke="#2ca02c"/>{dots}'
            f'<text x="{width / 2}" y="{height - 8}" text-anchor="middle" font-size="12">step</text>'
            f'<text x="{pad}" y="{pad - 10}" font-size="12">reward (dots; red = failed), best '
            f'TFLOP/s so far (green, max {tf_top / 1.1:.0f})</text></svg>')


def write_outputs(result: RunResult, out_dir: str | Path, meta: dict[str, Any]) -> dict[str, str]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"best_config": out / "best_config.json", "trajectory": out / "trajectory.json",
             "report": out / "report.md", "plot": out / "reward.svg"}
    s = summary(result, meta)
    library = meta.get("library") or {}
    paths["best_config"].write_text(json.dumps({"task": result.trajectory.task.describe(),
                                                "tflops": s["best_tflops"],
                                                "basis": library.get("basis"),
                                                "source": meta.get("evaluator"),
                                                "config": s["best_config"],
                                                "matmul_knobs": library.get("knobs"),
                                                "library": {k: library.get(k) for k in
                                                            ("accepted", "refusal")},
                                                "tune_cache": {
                                                    "key": meta.get("tune_cache_key"),
                                                    "note": meta.get("tune_cache_note")}},
                                               indent=2) + "\n")
    paths["trajectory"].write_text(json.dumps({"summary": s, **result.trajectory.to_json()},
                                              indent=2) + "\n")
    paths["report"].write_text(markdown(result, meta))
    paths["plot"].write_text(reward_svg(result))
    kept = result.trajectory.best_kernel()
    if kept is not None and Path(kept.kernel).is_file():   # the coder step's kept kernel
        paths["best_kernel"] = out / "best_kernel.py"
        paths["best_kernel"].write_text(Path(kept.kernel).read_text(encoding="utf-8"))
    return {k: str(v) for k, v in paths.items()}
