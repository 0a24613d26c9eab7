"""`argus optimize OP --shape MxNxK`: the agent loop end to end.

Starts from the library's smallest GEMM configuration and, within the budget, lets the
planner propose configurations; each is checked against the sm_90 limits and evaluated
(on a CPU: the analytical H200 cost model; with CUDA and the GPU backend: measured). Prints
one line per step; writes best_config.json, trajectory.json, report.md and reward.svg to
--out; records the episode in SQLite (--db) so --resume continues an interrupted run.

The planner is the embedded knowledge-guided search unless a model is configured:
  ARGUS_PROVIDER=openai ARGUS_MODEL=... ARGUS_BASE_URL=http://localhost:8000/v1
  ARGUS_PROVIDER=anthropic ARGUS_MODEL=... ARGUS_API_KEY=...
(flags below override the environment; see docs/agent.md). `gemm` is searched through its
knob table; `attention --shape B,HQ,HK,SQ,SK,D [--causal]` through the library attention
kernel's knobs (argus/cli/optimize_attention_cmd.py: timed on a GPU, ranked by the cost
model on a CPU, the winner into the tuned cache argus.ops.attention reads);
`attention --kernel`, `moe`, FILE.py::KERNEL and --kernelbench PROBLEM.py are kernel
tasks: a model writes whole kernels (argus/cli/optimize_kernel_cmd.py).

For gemm on a CPU the search stays in what argus.ops.matmul runs (--space library, the
default: each candidate's kernel is verified, on --workers local processes or a --ray
cluster), so the best configuration is one the library accepts; it goes into the tuning
cache marked as the cost model's prediction. --space model ranks the cost model's whole
knob table instead (kernels the library does not have included; nothing is written to the
cache, the reason is in best_config.json). A provider outage pauses the episode: --resume
continues it. Exit 0 when a valid configuration or kernel was found, 1 when none was or
the episode paused, 2 on a usage error.
"""
from __future__ import annotations

import argparse
import json
import sys

from argus.cli.errors import UsageError
from argus.cli.optimize_attention_cmd import add_arguments as add_attention_arguments
from argus.cli.optimize_attention_cmd import run_attention_optimize, wants_planner
from argus.cli.optimize_kernel_cmd import add_arguments as add_kernel_arguments
from argus.cli.optimize_kernel_cmd import DEFAULT_DTYPE, is_kernel_task, run_kernel_optimize

OPS = ("gemm",)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "optimize", help="run the optimisation agent on an op and shape",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("op", metavar="OP", nargs="?", default=None,
                        help="gemm, attention, moe, or FILE.py::KERNEL (or --kernelbench)")
    parser.add_argument("--shape", default=None, metavar="SHAPE",
                        help="gemm: MxNxK, e.g. 4096x4096x4096; attention: B,HQ,HK,SQ,SK,D, "
                             "e.g. 4,16,16,4096,4096,128; kernel tasks: SYM=N,... e.g. T=256")
    parser.add_argument("--dtype", default=DEFAULT_DTYPE,
                        help="gemm and the attention planner: input dtype (default bfloat16); "
                             "a kernel task's dtypes are its file's")
    parser.add_argument("--provider", choices=("embedded", "openai", "anthropic"),
                        help="planner model (default: $ARGUS_PROVIDER, else embedded)")
    parser.add_argument("--model", help="model name (default: $ARGUS_MODEL)")
    parser.add_argument("--base-url", help="endpoint (default: $ARGUS_BASE_URL)")
    parser.add_argument("--evaluator", choices=("auto", "cpu", "gpu"), default="auto",
                        help="auto: the GPU when CUDA and the backend exist, else the cost model")
    parser.add_argument("--budget", type=int, default=None, metavar="N",
                        help="evaluations (default 24)")
    parser.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                        help="wall-clock limit (default 600)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="output folder (default out/optimize/OP-SHAPE)")
    parser.add_argument("--db", default=None, metavar="FILE",
                        help="episode database (default $ARGUS_AGENT_DB or out/agent/episodes.sqlite)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the latest unfinished episode of the same task")
    parser.add_argument("--space", choices=("library", "model"), default="library",
                        help="library: what argus.ops.matmul runs, kernels verified (default); "
                             "model: the cost model's whole knob table (CPU only)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="local processes verifying candidates (default: the CPU count; "
                             "0: in this process)")
    parser.add_argument("--ray", default=None, metavar="auto|ADDRESS",
                        help="judge candidates on a Ray cluster instead (verification on CPU "
                             "workers, timing one GPU per task); needs the ray package")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--quiet", action="store_true", help="no per-step lines")
    add_attention_arguments(parser)
    add_kernel_arguments(parser)
    parser.set_defaults(run=run_optimize)


def _progress(quiet: bool):
    def show(step, trajectory):
        if quiet:
            return
        best = trajectory.best_tflops()
        tf = f"{step.outcome.tflops:7.1f}" if step.outcome.tflops else "      -"
        what = step.config.short() if step.config else step.reply_error[:60]
        print(f"[{step.index:3d}] {step.technique[:36]:36s} {step.outcome.status:13s} {tf} TF/s "
              f"reward {step.reward:5.3f}  best {best or 0:7.1f}  {what}", file=sys.stderr)
    return show


def run_optimize(args) -> int:
    from argus.agent.evaluators import EvaluatorUnavailable
    from argus.agent.optimize import run_episode
    from argus.agent.planner import Budget
    from argus.agent.providers import ProviderError, load_config
    from argus.agent.task import TaskError, parse_gemm_shape
    from argus.agent.parallel import BackendError, make_backend

    if wants_planner(args):
        return run_attention_optimize(args)
    if is_kernel_task(args):
        return run_kernel_optimize(args)
    if args.op is None:
        raise UsageError("name what to optimize: gemm, attention, moe, FILE.py::KERNEL, or "
                         "--kernelbench PROBLEM.py")
    if args.op not in OPS:
        raise UsageError(f"unknown op {args.op!r}; use gemm, attention, moe, FILE.py::KERNEL "
                         f"or --kernelbench PROBLEM.py")
    if not args.shape:
        raise UsageError("optimize gemm needs --shape MxNxK, e.g. --shape 4096x4096x4096")
    try:
        task = parse_gemm_shape(args.shape, args.dtype)
        default = Budget()
        budget = Budget(evaluations=default.evaluations if args.budget is None else args.budget,
                        seconds=default.seconds if args.time_budget is None else args.time_budget)
        config = load_config({"provider": args.provider, "model": args.model,
                              "base_url": args.base_url})
    except (TaskError, ProviderError, ValueError) as err:
        raise UsageError(str(err)) from None
    out = args.out or f"out/optimize/{args.op}-{task.shape_text}"
    if args.workers is not None and args.workers < 0:
        raise UsageError(f"--workers {args.workers}: give 0 (in this process) or more")
    try:
        with make_backend(args.ray, args.workers) as backend:
            run = run_episode(task, config, evaluator=args.evaluator, budget=budget,
                              out_dir=out, db=args.db, resume=args.resume,
                              on_step=_progress(args.quiet or args.json), space=args.space,
                              backend=backend)
    except (EvaluatorUnavailable, ProviderError, TaskError, BackendError) as err:
        raise UsageError(str(err)) from None
    s = run["summary"]
    if args.json:
        print(json.dumps({"summary": s, "paths": run["paths"]}, indent=2))
    else:
        meta = s["meta"]
        print(f"{args.op} {task.shape_text}: {meta['evaluator_note']}; planner "
              f"{meta['provider']}{' (' + meta['model'] + ')' if meta['model'] else ''}")
        print(f"stop: {s['stop_reason']} ({s['evaluations']} evaluations, {s['steps']} steps, "
              f"{s['seconds']:.1f} s)")
        library = meta.get("library") or {}
        if s["best_config"]:
            basis = " (predicted by the cost model, not measured)" \
                if library.get("basis") == "predicted" else ""
            print(f"best: {s['best_tflops']:.1f} TFLOP/s{basis} at step {s['best_step']} "
                  f"({s['speedup_over_start']:.2f}x the start): {json.dumps(s['best_config'])}")
            print("argus.ops.matmul: " + ("accepts it" if library.get("accepted") else
                                          f"refuses it: {library.get('refusal')}")
                  + f"; tuning cache: {meta.get('tune_cache_note')}")
        else:
            first = run["result"].trajectory.steps[0].outcome.feedback.splitlines()
            print("best: none (no configuration passed)"
                  + (f"; the start failed: {first[0]}" if first else ""))
        workers = (meta.get("parallel") or {}).get("workers") or {}
        if len(workers) > 1:
            print(f"candidates per worker ({meta['parallel']['backend']}): " + ", ".join(
                f"{w} {n['verify']} verified" + (f" {n['time']} timed" if n["time"] else "")
                for w, n in workers.items()))
        for name, path in run["paths"].items():
            print(f"wrote {path}")
    if s["meta"].get("paused"):
        print(f"paused: {s['stop_reason']}; {s['meta']['resume_hint']}", file=sys.stderr)
        return 1
    return 0 if s["best_config"] else 1
