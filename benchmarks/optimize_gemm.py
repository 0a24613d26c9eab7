"""Issue 8's H200 check: the embedded planner, starting from the library's smallest valid
GEMM configuration, must reach >= 90% of the best hand-picked configuration's speed on
three shapes within its default budget.

    python benchmarks/optimize_gemm.py                 # on the H200: measured, writes
                                                       # benchmarks/results/optimize_gemm.json
    python benchmarks/optimize_gemm.py --cost-model    # anywhere: the same procedure on the
                                                       # CPU cost model (a dry run, labelled so)

On the GPU every configuration (hand-picked and planner-proposed) goes through the same
evaluator: the static resource checks, then argus.ops.matmul at those constants measured
by the harness (correctness checks, CUDA events, torch.matmul timed in the same run).
--isolated runs each evaluation in a child process (argus.bench.run_isolated; slower);
the default is in-process, which is fine here because the candidate is the library's own
kernel, not model-written code. Each configuration is a new kernel build, so a shape can
take minutes: `--shape S --merge` runs one shape and keeps the others in the file. Exit status: 0 when every shape reaches the bar, 1 when
one does not, 2 when the GPU (or the GPU backend) is missing for a measured run.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from argus.agent.evaluators import CpuEvaluator, EvaluatorUnavailable, GpuEvaluator  # noqa: E402
from argus.agent.evaluators import gpu as gpu_eval  # noqa: E402
from argus.agent.gemm_config import SMALLEST  # noqa: E402
from argus.agent.planner import Budget, IcrlPlanner  # noqa: E402
from argus.agent.providers.embedded import EmbeddedProvider  # noqa: E402
from argus.agent.search_space import HAND_PICKED  # noqa: E402
from argus.agent.task import GemmTask, parse_gemm_shape  # noqa: E402

SHAPES = ("4096x4096x4096", "8192x8192x8192", "4096x4096x14336")
BAR = 0.90


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True,
                              text=True, timeout=10).stdout.strip() or None
    except OSError:
        return None


def _environment(measured: bool) -> dict:
    env = {"python": platform.python_version(), "host": platform.node(), "git": _git_commit()}
    if measured:
        import torch
        from argus.bench.clocks import read_clocks
        env.update(torch=torch.__version__, cuda=torch.version.cuda,
                   device_name=torch.cuda.get_device_name(0), clocks=read_clocks())
    return env


def run_shape(task: GemmTask, evaluator, budget: Budget, log) -> dict:
    hand = {}
    for name, cfg in HAND_PICKED.items():
        outcome = evaluator.evaluate(cfg, task)
        hand[name] = {"config": cfg.to_json(), **outcome.to_json()}
        log(f"  hand-picked {name:30s} {outcome.status:13s} "
            f"{outcome.tflops or 0:7.1f} TFLOP/s")
    ok = {k: v for k, v in hand.items() if v["status"] == "ok"}
    best_name = max(ok, key=lambda k: ok[k]["tflops"]) if ok else None
    t0 = time.monotonic()
    result = IcrlPlanner(EmbeddedProvider(), evaluator, task, start=SMALLEST, budget=budget,
                         on_step=lambda s, t: log(
                             f"  [{s.index:2d}] {s.technique[:40]:40s} {s.outcome.status:13s} "
                             f"{s.outcome.tflops or 0:7.1f} TFLOP/s")).run()
    best = result.trajectory.best()
    ratio = (best.outcome.tflops / ok[best_name]["tflops"]) if best and best_name else None
    return {"shape": task.shape_text, "task": task.describe(), "hand_picked": hand,
            "best_hand_picked": best_name,
            "best_hand_picked_tflops": ok[best_name]["tflops"] if best_name else None,
            "planner": {"start": SMALLEST.to_json(), "evaluations": result.evaluations,
                        "stop_reason": result.stop_reason, "seconds": time.monotonic() - t0,
                        "best_step": best.index if best else None,
                        "best_config": best.config.to_json() if best else None,
                        "best_tflops": best.outcome.tflops if best else None,
                        "best_details": best.outcome.details if best else None,
                        "steps": [s.to_json() for s in result.trajectory.steps]},
            "ratio_to_best_hand_picked": ratio, "passes": ratio is not None and ratio >= BAR}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", action="append", help="MxNxK (repeatable; default three)")
    parser.add_argument("--budget", type=int, default=Budget().evaluations,
                        help="planner evaluations per shape (default: the planner's default)")
    parser.add_argument("--cost-model", action="store_true",
                        help="dry run on the CPU cost model instead of measuring")
    parser.add_argument("--isolated", action="store_true",
                        help="each GPU evaluation in a child process (slower)")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other shapes already in the output file (run one shape "
                             "per call when a call has a time limit)")
    parser.add_argument("--out", help="JSON path (default benchmarks/results/optimize_gemm"
                                      "[_cost_model].json)")
    args = parser.parse_args(argv)
    measured = not args.cost_model
    if measured:
        try:
            bench = (gpu_eval.default_benchmark() if args.isolated
                     else gpu_eval.inprocess_benchmark())
        except EvaluatorUnavailable as err:
            print(f"optimize_gemm: this benchmark needs a GPU: {err}. Run it on the H200, "
                  f"or pass --cost-model for a CPU dry run.", file=sys.stderr)
            return 2
        evaluator = GpuEvaluator(bench)
    else:
        evaluator = CpuEvaluator()
    out = args.out or os.path.join(HERE, "results", "optimize_gemm.json" if measured
                                   else "optimize_gemm_cost_model.json")
    budget = Budget(evaluations=args.budget, seconds=3600)
    shapes = [parse_gemm_shape(s) for s in (args.shape or SHAPES)]
    record = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "measured": measured,
              "evaluator": "gpu (argus.ops.matmul via argus.bench, "
                           + ("isolated)" if args.isolated else "in-process)")
              if measured else "cpu cost model (predictions, NOT measurements)",
              "bar": BAR, "budget": args.budget, "environment": _environment(measured),
              "shapes": []}
    for task in shapes:
        print(f"{task.shape_text}:", file=sys.stderr)
        record["shapes"].append(run_shape(task, evaluator, budget,
                                          lambda line: print(line, file=sys.stderr)))
        r = record["shapes"][-1]
        print(f"{task.shape_text}: planner {r['planner']['best_tflops'] or 0:.1f} vs best "
              f"hand-picked {r['best_hand_picked']} {r['best_hand_picked_tflops'] or 0:.1f} "
              f"TFLOP/s: ratio {r['ratio_to_best_hand_picked'] or 0:.3f} "
              f"({'pass' if r['passes'] else 'FAIL'})")
    if args.merge and os.path.exists(out):
        with open(out) as f:
            earlier = json.load(f)
        if earlier.get("measured") == measured:
            done = {r["shape"] for r in record["shapes"]}
            record["shapes"] = [r for r in earlier.get("shapes", []) if r["shape"] not in done] \
                + record["shapes"]
            record["merged_from"] = earlier.get("date")
    record["all_pass"] = all(r["passes"] for r in record["shapes"])
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(record, f, indent=2, default=str)
    print(f"wrote {out}")
    return 0 if record["all_pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
