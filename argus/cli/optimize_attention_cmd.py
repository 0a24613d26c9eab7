"""`argus optimize attention --shape B,HQ,HK,SQ,SK,D [--causal] [--layout bshd]`: the
embedded planner over the library attention kernel's knobs (argus/agent/attention/).

On a GPU each candidate is checked against torch SDPA and timed; on a CPU the cost model
ranks them (its numbers are estimates, and it says timings need a GPU). The best goes into
the tuned cache argus.ops.attention reads. `--kernel` (or a SYM=N shape, or --start) keeps
the whole-kernel coding task of optimize_kernel_cmd.py instead. Exit 0 when a configuration
passed, 1 when none did, 2 on a usage error.
"""
from __future__ import annotations

import json
import sys

from argus.cli.errors import UsageError


def add_arguments(parser) -> None:
    group = parser.add_argument_group("attention (the library kernel's knobs)")
    group.add_argument("--causal", action="store_true",
                       help="attention: causal, bottom-right aligned (or end --shape with c)")
    group.add_argument("--layout", choices=("bhsd", "bshd"), default="bhsd",
                       help="attention: the tensors' layout (default bhsd)")
    group.add_argument("--kernel", action="store_true",
                       help="attention: the whole-kernel coding task (a model rewrites "
                            "examples/flash_attention.py::flash_fwd) instead of the knob planner")


def wants_planner(args) -> bool:
    """`argus optimize attention` tunes the library's knobs unless the kernel task is asked
    for: --kernel, --start FILE, or a SYM=N shape (the kernel task's)."""
    if args.op != "attention" or args.kernel or args.start or args.kernelbench:
        return False
    return "=" not in (args.shape or "")


def _progress(quiet: bool):
    def show(step, steps):
        if quiet:
            return
        ok = [s.outcome.time_ms for s in steps if s.outcome.ok and s.outcome.time_ms]
        t = f"{step.outcome.time_ms:8.4f} ms" if step.outcome.time_ms else "       - ms"
        basis = "" if step.outcome.source == "gpu" else " (model)"
        print(f"[{step.index:3d}] {step.outcome.status:13s} {t}{basis}  best "
              f"{min(ok) if ok else 0:8.4f} ms  {step.config.short()}", file=sys.stderr)
    return show


def run_attention_optimize(args) -> int:
    from argus.agent.attention.optimize import run_episode
    from argus.agent.attention.planner import default_budget
    from argus.agent.attention.task import SYNTAX, parse_attention_shape
    from argus.agent.evaluators.base import EvaluatorUnavailable
    from argus.agent.planner import Budget
    from argus.agent.task import TaskError

    if not args.shape:
        raise UsageError(f"optimize attention needs --shape {SYNTAX}")
    if args.provider not in (None, "embedded"):
        raise UsageError("optimize attention runs the embedded planner only; a model writes "
                         "whole kernels with --kernel")
    try:
        task = parse_attention_shape(args.shape, args.causal, args.dtype, args.layout)
        default = default_budget()
        budget = Budget(evaluations=default.evaluations if args.budget is None else args.budget,
                        seconds=default.seconds if args.time_budget is None else args.time_budget)
    except (TaskError, ValueError) as err:
        raise UsageError(str(err)) from None
    out = args.out or f"out/optimize/attention-{task.shape_text.replace(':', '-')}"
    try:
        run = run_episode(task, evaluator=args.evaluator, budget=budget, out_dir=out,
                          on_step=_progress(args.quiet or args.json))
    except EvaluatorUnavailable as err:
        raise UsageError(str(err)) from None
    s = run["summary"]
    if args.json:
        print(json.dumps({"summary": s, "paths": run["paths"]}, indent=2, default=str))
        return 0 if s["best"] else 1
    print(f"attention {task.shape_text} ({task.dtype}): {s['evaluator_note']}; planner embedded")
    space = s["space"]
    print(f"space: {space['accepted']} configurations accepted of {space['table_size']} "
          f"(refused: {', '.join(f'{k} {v}' for k, v in space['refused_by'].items()) or 'none'}"
          f"){'' if s['build_check'] else '; no CUDA compiler here: builds not probed'}")
    print(f"stop: {s['stop_reason']} ({s['evaluations']} evaluations, {s['seconds']:.1f} s)")
    best = s["best"]
    if best:
        basis = " (the cost model's estimate; timings need a GPU)" \
            if best["basis"] == "predicted" else ""
        speed = (f", {s['speedup_over_start']:.2f}x the library's configuration"
                 if s["speedup_over_start"] else "")
        print(f"best: {best['time_ms']:.4f} ms, {best['tflops']:.0f} TFLOP/s{basis} at step "
              f"{best['step']}{speed}: {json.dumps(best['config'])}")
        print(f"tuned cache: {s['tune_cache_note']} ({s['tune_cache_key']})")
    else:
        print("best: none (no configuration passed)")
    for path in run["paths"].values():
        print(f"wrote {path}")
    return 0 if best else 1
