"""Issue 8's H200 check: the embedded planner, starting from the library's smallest valid
GEMM configuration, must reach >= 90% of the best hand-picked configuration's speed on
three shapes within its default budget.

    python benchmarks/optimize_gemm.py                 # on the H200 (under 8 minutes): writes
        benchmarks/results/optimize_gemm.json and .md, prints a table last
    python benchmarks/optimize_gemm.py --cost-model    # anywhere: the same procedure on the
        CPU cost model (predictions, labelled so; rehearses the space, verifier and budgets)

What is compared, per shape, all in one process tree on one GPU:
- the hand-picked configurations: the shape table's choice (`config_for`, what
  argus.ops.matmul runs without knobs; named "table") and the HAND_WRITTEN list below,
  the tiles and rings an engineer tries first on Hopper;
- the embedded planner (knowledge-guided bandit), started from the library's smallest valid
  configuration (LibrarySpace.smallest_valid: every knob at the smallest value
  argus.ops.matmul accepts, the ring raised to the depth the verifier proves: 2), searching
  only what the library runs (library_space.py), with its default budget (24 evaluations,
  600 s), cut only where this run's time share is shorter (then said so);
- at the end, the planner's best and the best hand-picked re-timed next to each other
  (order planner, hand, hand, planner; 100 timed calls each): the ratio of these re-timed
  speeds is the verdict (>= 0.90 passes).
Every configuration goes through the same GPU evaluator: the library's refusal and the
verifier first (nothing refused is measured), then argus.ops.matmul measured by the harness
(argus.bench: poisoned outputs, fp64 oracle, CUDA events, torch.matmul timed in the same
run, re-check after timing) in one worker child with a watchdog per configuration
(argus/agent/evaluators/gpu_session.py); the planner and this script never run a kernel.

Time: the whole run has a deadline (--deadline, 420 s, process starts included); each shape
gets an equal share of what is left. Results are written after every shape, so a run cut
short keeps what it finished. Exit status: 0 every shape passes, 1 one does not (or was
not reached), 2 no GPU / no backend / a setting that would falsify the comparison.
"""
from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import replace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from argus.agent.evaluators import CpuEvaluator, EvaluatorUnavailable, GpuEvaluator  # noqa: E402
from argus.agent.evaluators import gpu as gpu_eval  # noqa: E402
from argus.agent.evaluators.base import Outcome  # noqa: E402
from argus.agent.gemm_config import GemmConfig  # noqa: E402
from argus.agent.library_space import LibrarySpace  # noqa: E402
from argus.agent.library_verifier import LibraryVerifier, VerifierMissing  # noqa: E402
from argus.agent.planner import DEFAULT_EVALUATIONS, DEFAULT_SECONDS, Budget, IcrlPlanner  # noqa: E402
from argus.agent.providers.embedded import EmbeddedProvider  # noqa: E402
from argus.agent.task import GemmTask, parse_gemm_shape  # noqa: E402
from argus.agent.time_budget import Deadline, planner_seconds, share_end  # noqa: E402

SHAPES = ("4096x4096x4096", "8192x8192x8192", "256x8192x8192")
BAR = 0.90
DEADLINE_S = 420.0       # the device call allows 8 minutes for this run; the rest is margin
EVAL_TIMEOUT_S = 30.0    # one configuration: build, 4 checks, timing, re-check (~1-3 s)
REPS, RETIME_REPS = 50, 100
MIN_SHAPE_S = 5.0        # a shape is not started with less than this left
RETIME_ORDER = ("planner", "hand", "hand", "planner")

# The hand-written configurations (knobs over the library's fixed ones: a producer
# warpgroup, persistent, raster m, no cluster along N). Each is what a Hopper GEMM engineer
# tries first; none was tuned on these shapes.
_TILE_128x256 = {"BM": 128, "consumers": 2, "BN": 256, "BK": 64, "group": 8}
_TILE_128x128 = {"BM": 128, "consumers": 2, "BN": 128, "BK": 64, "group": 8}
HAND_WRITTEN = {
    # 128x256x64 with a 4-stage ring: the tile of fast.cu, ThunderKittens and the Triton
    # tutorial's Hopper config; the library's own default before the shape table.
    "128x256_s4": {**_TILE_128x256, "stages": 4},
    # The same tile with the TMA-store epilogue (ThunderKittens, fast.cu); its 64 KB staging
    # tile leaves room for 3 stages.
    "128x256_s3_tma": {**_TILE_128x256, "stages": 3, "epilogue": "smem_tma"},
    # ... and as fast.cu's fastest kernel runs it: 2-block clusters along M sharing B by
    # TMA multicast.
    "128x256_s3_tma_cm2": {**_TILE_128x256, "stages": 3, "epilogue": "smem_tma",
                           "cluster_m": 2},
    # CUTLASS's 128x128x64 cooperative tile with as deep a ring as ~192 KB holds.
    "128x128_s6": {**_TILE_128x128, "stages": 6},
    # 128x128 with the TMA-store epilogue (32 KB staging), 5 stages.
    "128x128_s5_tma": {**_TILE_128x128, "stages": 5, "epilogue": "smem_tma"},
    # Split-K over 2, what one tries when there are few output tiles (skinny M).
    "128x128_s6_splitk2": {**_TILE_128x128, "stages": 6, "split_k": 2},
}


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True,
                              text=True, timeout=10).stdout.strip() or None
    except OSError:
        return None


def hand_picked(space: LibrarySpace, task: GemmTask) -> dict[str, GemmConfig]:
    """{name: configuration}: the shape table's choice, then HAND_WRITTEN over the library's
    fixed knobs, each in the canonical form of its kernel."""
    base = space.smallest_valid(task)
    out = {"table": space.table_config(task)}
    for name, knobs in HAND_WRITTEN.items():
        cfg = replace(base, **knobs)
        out[name] = space.canonical(cfg, task) if space.accepts(cfg, task) else cfg
    return out


def _table_source(task: GemmTask) -> str:
    """Where the shape table's choice comes from: a measured sweep, or the heuristic."""
    from argus.ops import gemm_configs

    tuned = getattr(gemm_configs, "tuned_knobs", None)
    if tuned is None:
        return "heuristic"
    return "tuned (a sweep's winner)" if tuned(task.M, task.N, task.K, "kn") is not None \
        else "heuristic"


def check_and_evaluate(evaluator, space: LibrarySpace, cfg: GemmConfig, task: GemmTask) -> Outcome:
    """The evaluator's outcome; an evaluator without the space (the cost model) gets the
    same refusals the GPU evaluator makes, so both runs treat a configuration alike."""
    if getattr(evaluator, "space", None) is None:
        why, reasons = space.why_invalid(cfg, task)
        if why:
            return Outcome("compile_error" if why == "refused" else "invalid",
                           source="library", feedback="; ".join(reasons)[:2000])
    return evaluator.evaluate(cfg, task)


def _peer_tflops(outcome: Outcome, task: GemmTask) -> float | None:
    peer = (outcome.details.get("benchmark") or {}).get("peer_time_ms")
    return task.flops / (peer / 1e3) / 1e12 if isinstance(peer, (int, float)) and peer > 0 else None


def retime(evaluator, space, task, planner_cfg: GemmConfig, hand_cfg: GemmConfig) -> dict:
    """The two best re-timed next to each other (RETIME_ORDER); their mean speeds."""
    same = space.canonical(planner_cfg, task).key() == space.canonical(hand_cfg, task).key()
    order = ("planner", "planner") if same else RETIME_ORDER
    runs = {"planner": [], "hand": []}
    for who in order:
        outcome = check_and_evaluate(evaluator, space, planner_cfg if who == "planner"
                                     else hand_cfg, task)
        runs[who].append(outcome)
    if same:
        runs["hand"] = runs["planner"]
    failed = [f"{who}: {o.status}: {o.feedback[:300]}" for who, outs in runs.items()
              for o in outs if not o.ok]
    out = {"order": list(order), "same_kernel": same,
           "planner_tflops_each": [o.tflops for o in runs["planner"]],
           "hand_tflops_each": [o.tflops for o in runs["hand"]],
           "torch_tflops_each": [_peer_tflops(o, task) for o in runs["planner"] + runs["hand"]]}
    if failed:
        return {**out, "ok": False, "failures": failed}
    torch_each = [t for t in out["torch_tflops_each"] if t]
    return {**out, "ok": True,
            "planner_tflops": statistics.fmean(out["planner_tflops_each"]),
            "hand_tflops": statistics.fmean(out["hand_tflops_each"]),
            "torch_tflops": statistics.fmean(torch_each) if torch_each else None}


def run_shape(task: GemmTask, evaluator, retimer, space: LibrarySpace, budget_evals: int,
              deadline: Deadline, shapes_left: int, log) -> dict:
    began = deadline.clock()
    ends = share_end(deadline, shapes_left)
    record = {"shape": task.shape_text, "task": task.describe(),
              "time_share_s": round(ends - began, 1), "table_source": _table_source(task)}
    evaluation_s: list[float] = []

    def timed(fn, *args):
        t0 = time.monotonic()
        out = fn(*args)
        evaluation_s.append(time.monotonic() - t0)
        return out

    hand, aliases, by_kernel = {}, {}, {}
    for name, cfg in hand_picked(space, task).items():
        key = cfg.key()
        if key in by_kernel:                      # the same kernel as an earlier entry
            aliases[name] = by_kernel[key]
            hand[name] = {**hand[by_kernel[key]], "same_as": by_kernel[key]}
            log(f"  hand-picked {name:20s} = {by_kernel[key]}")
            continue
        by_kernel[key] = name
        outcome = timed(check_and_evaluate, evaluator, space, cfg, task)
        hand[name] = {"config": cfg.to_json(), "short": cfg.short(), **outcome.to_json()}
        log(f"  hand-picked {name:20s} {cfg.short():48s} {outcome.status:13s} "
            f"{outcome.tflops or 0:7.1f} TFLOP/s")
    ok = {k: v for k, v in hand.items() if v["status"] == "ok" and "same_as" not in v}
    best_name = max(ok, key=lambda k: (ok[k]["tflops"], k == "table")) if ok else None
    record.update(hand_picked=hand, best_hand_picked=best_name,
                  best_hand_picked_tflops=ok[best_name]["tflops"] if best_name else None)
    hand_s = deadline.clock() - began

    start = space.smallest_valid(task)
    seconds = planner_seconds(ends, deadline.clock(), evaluation_s,
                              len(RETIME_ORDER), DEFAULT_SECONDS)
    record["planner"] = {"start": start.to_json(), "start_short": start.short(),
                         "default_budget": {"evaluations": DEFAULT_EVALUATIONS,
                                            "seconds": DEFAULT_SECONDS},
                         "budget": {"evaluations": budget_evals,
                                    "seconds": None if seconds is None else round(seconds, 1)}}
    if seconds is None:
        record["planner"]["stop_reason"] = "not started: this shape's time share ran out"
        record.update(ratio_to_best_hand_picked=None, passes=False)
        return record
    t0 = deadline.clock()
    result = IcrlPlanner(EmbeddedProvider(), evaluator, task, start=start, space=space,
                         budget=Budget(evaluations=budget_evals, seconds=seconds),
                         on_step=lambda s, t: log(
                             f"  [{s.index:2d}] {s.technique[:34]:34s} "
                             f"{s.config.short() if s.config else '-':48s} "
                             f"{s.outcome.status:13s} {s.outcome.tflops or 0:7.1f} TFLOP/s")).run()
    evaluation_s += [s.seconds for s in result.trajectory.steps if not s.repeated]
    best = result.trajectory.best()
    statuses = {}
    for s in result.trajectory.steps:
        statuses[s.outcome.status] = statuses.get(s.outcome.status, 0) + 1
    record["planner"].update(
        evaluations=result.evaluations, stop_reason=result.stop_reason,
        within_default_budget=result.evaluations <= DEFAULT_EVALUATIONS,
        seconds=deadline.clock() - t0, statuses=statuses,
        best_step=best.index if best else None,
        best_config=best.config.to_json() if best else None,
        best_short=best.config.short() if best else None,
        best_tflops=best.outcome.tflops if best else None,
        steps=[s.to_json() for s in result.trajectory.steps])
    planner_s = deadline.clock() - t0

    t0 = deadline.clock()
    if best is None or best_name is None:
        record["retimed"] = {"ok": False, "failures": ["no correct configuration to compare"
                                                       + ("" if best else " from the planner")]}
    else:
        hand_cfg = GemmConfig(**hand[best_name]["config"])
        log(f"  re-timing planner {best.config.short()} vs {best_name}")
        record["retimed"] = retime(retimer, space, task, best.config, hand_cfg)
    retimed = record["retimed"]
    ratio = retimed["planner_tflops"] / retimed["hand_tflops"] if retimed["ok"] else None
    record.update(ratio_to_best_hand_picked=ratio,
                  first_pass_ratio=(best.outcome.tflops / record["best_hand_picked_tflops"]
                                    if best and best_name else None),
                  passes=ratio is not None and ratio >= BAR,
                  seconds={"hand_picked": round(hand_s, 2), "planner": round(planner_s, 2),
                           "retime": round(deadline.clock() - t0, 2),
                           "total": round(deadline.clock() - began, 2)})
    return record


def _fmt(value, spec=".1f") -> str:
    return format(value, spec) if isinstance(value, (int, float)) else "-"


def table_lines(record: dict) -> list[str]:
    head = (f"{'shape':16s} {'best hand-picked':20s} {'TFLOP/s':>8s} {'planner best':48s} "
            f"{'TFLOP/s':>8s} {'ratio':>6s} {'torch':>7s} {'evals':>5s}  verdict")
    lines = [head]
    for r in record["shapes"]:
        rt = r.get("retimed") or {}
        p = r.get("planner") or {}
        verdict = "pass" if r.get("passes") else "FAIL"
        lines.append(f"{r['shape']:16s} {str(r.get('best_hand_picked')):20s} "
                     f"{_fmt(rt.get('hand_tflops')):>8s} {str(p.get('best_short')):48s} "
                     f"{_fmt(rt.get('planner_tflops')):>8s} "
                     f"{_fmt(r.get('ratio_to_best_hand_picked'), '.3f'):>6s} "
                     f"{_fmt(rt.get('torch_tflops')):>7s} {str(p.get('evaluations', '-')):>5s}  "
                     f"{verdict}")
    return lines


def markdown(record: dict) -> str:
    kind = "measured on the GPU" if record["measured"] else \
        "the CPU cost model's PREDICTIONS (not measurements)"
    env = record["environment"]
    out = [f"# Issue 8: embedded planner vs hand-picked GEMM configurations ({kind})", "",
           f"Date {record['date']}, git {env.get('git')}, device "
           f"{env.get('worker', {}).get('device_name', 'none (cost model)')}, torch "
           f"{env.get('worker', {}).get('torch', '-')}. Bar: planner >= {record['bar']:.2f} x "
           f"the best hand-picked, both re-timed side by side at the end. Verdict: "
           f"**{'all shapes pass' if record['all_pass'] else 'NOT all shapes pass'}**.", "",
           "```", *table_lines(record), "```", "",
           "How to read it: `TFLOP/s` are the re-timed means (order planner, hand, hand, "
           "planner; the harness's median of 100 timed calls each), `ratio` = planner / best "
           "hand-picked, `torch` = torch.matmul timed in the same runs, `evals` = the "
           "planner's evaluations (default budget 24, the start included).", "",
           f"Run: {record['costs']['wall_s']:.0f} s wall (deadline {record['deadline_s']:.0f} s); "
           f"worker starts {record['costs'].get('worker_starts')}; verifier "
           f"{record['costs']['verifier']}.", ""]
    for r in record["shapes"]:
        p = r.get("planner", {})
        out += [f"## {r['shape']}", "",
                f"Start (the library's smallest valid configuration): `{p.get('start_short')}`. "
                f"Planner: {p.get('evaluations', 0)} evaluations, stop: {p.get('stop_reason')}, "
                f"budget {p.get('budget')}; best `{p.get('best_short')}` at step "
                f"{p.get('best_step')}. Time share {r.get('time_share_s')} s, used "
                f"{r.get('seconds')}.", "",
                f"The shape table's choice (`table`) is {r.get('table_source')}.", "",
                "| hand-picked | configuration | status | TFLOP/s |", "|---|---|---|---|"]
        for name, h in r.get("hand_picked", {}).items():
            if "same_as" in h:
                out.append(f"| {name} | same kernel as {h['same_as']} | | |")
            else:
                out.append(f"| {name} | `{h['short']}` | {h['status']} | {_fmt(h.get('tflops'))} |")
        out += ["", "| step | technique | configuration | status | TFLOP/s | reward |",
                "|---|---|---|---|---|---|"]
        for s in p.get("steps", []):
            short = GemmConfig(**s["config"]).short() if s.get("config") else "-"
            out.append(f"| {s['index']} | {s['technique']} | `{short}` | "
                       f"{s['outcome']['status']} | {_fmt(s['outcome'].get('tflops'))} | "
                       f"{s['reward']:.3f} |")
        rt = r.get("retimed", {})
        out += ["", f"Re-timed: {json.dumps({k: rt.get(k) for k in ('order', 'same_kernel', 'planner_tflops_each', 'hand_tflops_each', 'failures') if k in rt})}",
                f"Ratio {_fmt(r.get('ratio_to_best_hand_picked'), '.3f')} (first pass "
                f"{_fmt(r.get('first_pass_ratio'), '.3f')}): "
                f"**{'pass' if r.get('passes') else 'FAIL'}**.", ""]
    return "\n".join(out) + "\n"


def _write(record: dict, out: str, report: str) -> None:
    record["all_pass"] = bool(record["shapes"]) and all(r.get("passes") for r in record["shapes"])
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(record, f, indent=1, default=str)
    with open(report, "w") as f:
        f.write(markdown(record))


def default_verify_workers() -> int:
    cores = os.cpu_count() or 1
    return min(8, cores // 2) if cores >= 8 else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", action="append", help="MxNxK (repeatable; default three)")
    parser.add_argument("--budget", type=int, default=DEFAULT_EVALUATIONS,
                        help="planner evaluations per shape (default: the planner's default)")
    parser.add_argument("--deadline", type=float, default=DEADLINE_S,
                        help="seconds for the whole run, shared by the shapes (default 420)")
    parser.add_argument("--eval-timeout", type=float, default=EVAL_TIMEOUT_S,
                        help="watchdog seconds for one configuration (default 30)")
    parser.add_argument("--verify-workers", type=int, default=default_verify_workers(),
                        help="processes verifying the planner's next candidates in parallel")
    parser.add_argument("--cost-model", action="store_true",
                        help="dry run on the CPU cost model instead of measuring")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other shapes already in the output file")
    parser.add_argument("--out", help="JSON path (default benchmarks/results/optimize_gemm"
                                      "[_cost_model].json); the report is the same path .md")
    args = parser.parse_args(argv)
    deadline = Deadline(args.deadline)
    measured = not args.cost_model
    if os.environ.get("ARGUS_GEMM_CONFIG"):
        print("optimize_gemm: ARGUS_GEMM_CONFIG is set; it overrides every configuration "
              "argus.ops.matmul builds, so the comparison would be false. Unset it.",
              file=sys.stderr)
        return 2
    space = LibrarySpace(verifier=LibraryVerifier(args.verify_workers))
    bench = None
    if measured:
        try:
            bench = gpu_eval.default_benchmark(timeout_s=args.eval_timeout, reps=REPS)
        except EvaluatorUnavailable as err:
            print(f"optimize_gemm: this benchmark needs a GPU: {err}. Run it on the H200, "
                  f"or pass --cost-model for a CPU dry run.", file=sys.stderr)
            return 2
        bench.limit = lambda: deadline.left() + 5.0
        evaluator = GpuEvaluator(bench, space=space, library=True)
        retimer = GpuEvaluator(functools.partial(bench, reps=RETIME_REPS), space=space,
                               library=True)
    else:
        evaluator = retimer = CpuEvaluator()
    out = args.out or os.path.join(HERE, "results", "optimize_gemm.json" if measured
                                   else "optimize_gemm_cost_model.json")
    report = os.path.splitext(out)[0] + ".md"
    shapes = [parse_gemm_shape(s) for s in (args.shape or SHAPES)]
    record = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "measured": measured,
              "evaluator": ("gpu: argus.ops.matmul through argus.bench in one worker child "
                            "(gpu_session), library refusals and verifier first")
              if measured else "cpu cost model (predictions, NOT measurements)",
              "bar": BAR, "budget": args.budget, "deadline_s": args.deadline,
              "hand_written": HAND_WRITTEN,
              "environment": {"python": platform.python_version(), "host": platform.node(),
                              "git": _git_commit(), "cpus": os.cpu_count()},
              "space": space.describe(shapes[0]), "shapes": [], "costs": {}}
    earlier = []
    if args.merge and os.path.exists(out):
        with open(out) as f:
            previous = json.load(f)
        if previous.get("measured") == measured:
            done = {t.shape_text for t in shapes}
            earlier = [r for r in previous.get("shapes", []) if r["shape"] not in done]
            record["merged_from"] = previous.get("date")
    finished = []
    try:
        try:
            space.smallest_valid(shapes[0])
        except VerifierMissing as err:
            print(f"optimize_gemm: {err}", file=sys.stderr)
            return 2
        for task in shapes:             # verify what every shape starts with, in parallel
            space.prefetch([c for c in hand_picked(space, task).values()
                            if space.accepts(c, task)], task)
        for i, task in enumerate(shapes):
            print(f"{task.shape_text}: ({deadline.left():.0f} s left)", file=sys.stderr)
            if deadline.left() < MIN_SHAPE_S:
                result = {"shape": task.shape_text, "passes": False,
                          "skipped": "the run's deadline passed before this shape"}
            else:
                result = run_shape(task, evaluator, retimer, space, args.budget, deadline,
                                   len(shapes) - i, lambda line: print(line, file=sys.stderr))
            finished.append(result)
            record["shapes"] = earlier + finished
            if bench is not None:
                record["environment"]["worker"] = bench.session.environment
            record["costs"] = {"wall_s": deadline.elapsed(),
                               "worker_starts": bench.session.starts if bench else [],
                               "verifier": space.verifier.stats()}
            _write(record, out, report)
            print(f"{task.shape_text}: ratio {_fmt(result.get('ratio_to_best_hand_picked'), '.3f')}"
                  f" ({'pass' if result.get('passes') else 'FAIL'})", file=sys.stderr)
    finally:
        space.verifier.close()
        if bench is not None:
            bench.close()
    print(f"wrote {out} and {report} ({deadline.elapsed():.0f} s)")
    print("\n".join(table_lines(record)))
    return 0 if record["all_pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
