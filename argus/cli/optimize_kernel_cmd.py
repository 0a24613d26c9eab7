"""`argus optimize` for kernel tasks: attention, moe, FILE.py::KERNEL and --kernelbench.

The candidate of such a task is a whole DSL kernel file written by a model (the coder,
argus/agent/coding/): checked by `argus check`, run on the CPU interpreter against the
reference on several input sets, its time ESTIMATED by the cost model of an H200 (labelled
as an estimate in every line and file). Writes best_kernel.py, trajectory.json and
report.md to --out. A provider outage pauses the episode (exit 1, "paused: ..."); the same
command with --resume continues it from --out's trajectory.json. Exit 0 when a correct
kernel was found, 1 when none was or the episode paused, 2 on a usage error (a bad file,
shape or flag: one line naming it).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from argus.cli.errors import UsageError

KERNEL_OPS = ("attention", "moe")
DEFAULT_DTYPE = "bfloat16"      # optimize's --dtype default (optimize_cmd.py)


def add_arguments(parser) -> None:
    group = parser.add_argument_group("kernel tasks (attention, moe, FILE.py::KERNEL, "
                                      "--kernelbench)")
    group.add_argument("--kernelbench", metavar="PROBLEM.py", default=None,
                       help="a KernelBench problem (class Model, get_inputs, get_init_inputs)")
    group.add_argument("--start", metavar="FILE.py", default=None,
                       help="the kernel file the search starts from (default: the op's)")
    group.add_argument("--samples", type=int, default=1, metavar="N",
                       help="replies per step (best-of-N; default 1)")
    group.add_argument("--temperature", type=float, default=0.0,
                       help="sampling temperature of the model (default 0)")
    group.add_argument("--max-tokens", type=int, default=None, metavar="N",
                       help="reply token budget (default: sized to the current kernel)")
    group.add_argument("--input-sets", type=int, default=3, metavar="N",
                       help="random input sets each candidate is checked on (default 3)")


def is_kernel_task(args) -> bool:
    op = args.op or ""
    return bool(args.kernelbench) or op in KERNEL_OPS or "::" in op or op.endswith(".py")


def _symbols(text: str | None) -> dict[str, int]:
    import argparse

    from argus.cli.run_cmd import parse_shape

    try:
        return parse_shape(text or "")
    except argparse.ArgumentTypeError as err:
        raise UsageError(f"--shape: {err}") from None


def build_task(args):
    from argus.agent.task import TaskError
    from argus.agent.tasks.file_task import file_task, op_task, parse_target
    from argus.agent.tasks.kernelbench import kernelbench_task

    if not 1 <= args.input_sets <= 16:
        raise UsageError("--input-sets: 1 to 16")
    start = Path(args.start) if args.start else None
    if start is not None and not start.is_file():
        raise UsageError(f"--start {args.start}: no such file")
    try:
        if args.kernelbench:
            if args.op:
                raise UsageError(f"give either an op ({args.op}) or --kernelbench, not both")
            return kernelbench_task(Path(args.kernelbench), args.input_sets, start)
        if args.op in KERNEL_OPS:
            return op_task(args.op, _symbols(args.shape), start, args.input_sets)
        path, kernel = parse_target(args.op)
        return file_task(path, kernel, _symbols(args.shape), start=start,
                         sets=args.input_sets)
    except TaskError as err:
        raise UsageError(str(err)) from None


def choose_device(evaluator: str, task) -> str:
    """"cuda" for --evaluator gpu (refused with the reason where it cannot run) and for
    auto on a machine with a CUDA GPU (a kernel task's kernel, or a KernelBench ModelNew's
    forward, built and timed there); "cpu" (the interpreter and the cost model) otherwise."""
    from argus.agent.evaluators.gpu import cuda_available

    if evaluator == "cpu":
        return "cpu"
    gpu = cuda_available()
    if evaluator == "gpu":
        if not gpu:
            raise UsageError("--evaluator gpu: no CUDA GPU here (torch.cuda.is_available() "
                             "is False); leave --evaluator at auto or cpu to run on the "
                             "interpreter with the cost model")
        return "cuda"
    return "cuda" if gpu else "cpu"


def _progress(quiet: bool):
    def show(step, steps):
        if quiet:
            return
        t = f"{step.outcome.time_ms * 1e3:9.2f} us" if step.outcome.time_ms else "         - us"
        what = step.reply_error[:60] or step.outcome.feedback.splitlines()[0][:60] \
            if (step.reply_error or step.outcome.feedback) else ""
        how = "measured" if step.outcome.source == "gpu" else "estimate"
        print(f"[{step.index:3d}] {step.technique[:30]:30s} {step.outcome.status:13s} {t} "
              f"({how}) reward {step.reward:5.3f}  {what}", file=sys.stderr)
    return show


def run_kernel_optimize(args) -> int:
    from argus.agent.coding.run_kernel_task import (NeedsModel, NothingToResume,
                                                    run_kernel_episode)
    from argus.agent.parallel import BackendError, make_backend
    from argus.agent.planner import Budget
    from argus.agent.providers import ProviderError, load_config

    if args.samples < 1 or args.samples > 16:
        raise UsageError("--samples: 1 to 16")
    if not 0.0 <= args.temperature <= 2.0:
        raise UsageError("--temperature: 0 to 2")
    if args.max_tokens is not None and not 256 <= args.max_tokens <= 200_000:
        raise UsageError("--max-tokens: 256 to 200000")
    if args.dtype != DEFAULT_DTYPE:
        raise UsageError(f"--dtype {args.dtype}: a kernel task's dtypes are its kernel file's "
                         f"(what the candidates declare), not a flag; --dtype applies to "
                         f"gemm and the attention planner. Leave it out")
    try:
        default = Budget()
        budget = Budget(evaluations=default.evaluations if args.budget is None else args.budget,
                        seconds=default.seconds if args.time_budget is None else args.time_budget)
        config = load_config({"provider": args.provider, "model": args.model,
                              "base_url": args.base_url})
    except (ProviderError, ValueError) as err:
        raise UsageError(str(err)) from None
    task = build_task(args)
    task.device = choose_device(args.evaluator, task)
    name = task.label.replace(" ", "-").replace(",", "_").replace("=", "")
    out = args.out or f"out/optimize/{name}"
    if args.workers is not None and args.workers < 0:
        raise UsageError(f"--workers {args.workers}: give 0 (in this process) or more")
    try:
        # a round's samples are judged side by side on the backend (checks on CPU workers,
        # runs one GPU each on a GPU machine)
        with make_backend(args.ray, args.workers) as backend:
            run = run_kernel_episode(task, config, budget=budget, out_dir=out,
                                     samples=args.samples, temperature=args.temperature,
                                     max_tokens=args.max_tokens,
                                     on_step=_progress(args.quiet or args.json),
                                     resume=args.resume, backend=backend)
    except (NeedsModel, NothingToResume, ProviderError, BackendError) as err:
        raise UsageError(str(err)) from None
    s = run["summary"]
    if args.json:
        print(json.dumps({"summary": s, "paths": run["paths"]}, indent=2, default=str))
    else:
        meta = s["meta"]
        print(f"{task.label}: {meta['evaluator_note']}; planner {meta['provider']}"
              f"{' (' + meta['model'] + ')' if meta['model'] else ''}")
        print(f"stop: {s['stop_reason']} ({s['evaluations']} evaluations, {s['steps']} steps, "
              f"{s['seconds']:.1f} s)")
        if s["best_time_ms"]:
            extra = (f" ({s['speedup_over_start']:.2f}x the start)"
                     if s["speedup_over_start"] else "")
            how = ("MEASURED on this GPU" if task.device == "cuda"
                   else "ESTIMATED on an H200")
            print(f"best: step {s['best_step']}, {how} {s['best_time_ms'] * 1e3:.2f} us"
                  f"{extra}")
            for bname, b in task.baselines.items():
                if b.get("time_ms"):
                    print(f"  vs {bname}: {b['time_ms'] * 1e3:.2f} us ({b['source']}): "
                          f"{b['time_ms'] / s['best_time_ms']:.2f}x")
        else:
            print("best: none (no candidate was correct)")
        parallel = meta.get("parallel") or {}
        if len(parallel.get("workers") or {}) > 1:
            print(f"candidates per worker ({parallel['backend']}): " + ", ".join(
                f"{w} {n['verify']} jobs" + (f" {n['time']} timed" if n["time"] else "")
                for w, n in parallel["workers"].items()))
        for key, path in run["paths"].items():
            print(f"wrote {path}")
    if s["meta"].get("paused"):
        print(f"paused: {s['stop_reason']}; {s['meta']['resume_hint']}", file=sys.stderr)
        return 1
    return 0 if s["best_time_ms"] else 1
