"""Issue 8's H200 check: the embedded planner, starting from the library's smallest valid
GEMM configuration, must reach >= 90% of the best hand-picked configuration's speed on
three shapes within its default budget.

    python benchmarks/optimize_gemm.py                 # on the H200: writes
        benchmarks/results/optimize_gemm.json and .md, prints a table last
    python benchmarks/optimize_gemm.py --shape 8192x8192x8192 --merge
                                                       # one shape, merged into that file
    python benchmarks/optimize_gemm.py --estimate      # anywhere: the expected seconds per
        shape (calibrated on the last measured results file), nothing run
    python benchmarks/optimize_gemm.py --cost-model    # anywhere: the same procedure on the
        CPU cost model (predictions, labelled so; rehearses the space, verifier and budgets)
    python benchmarks/optimize_gemm.py --combine a.json b.json --out r.json
                                                       # per-shape results files into one

What is compared, per shape, all in one worker child on one GPU:
- the hand-picked configurations: the shape table's choice (`config_for`, what
  argus.ops.matmul runs without knobs; named "table") and the HAND_WRITTEN list below,
  the tiles and rings an engineer tries first on Hopper;
- the embedded planner (knowledge-guided bandit), started from the library's smallest valid
  configuration (LibrarySpace.smallest_valid), searching only what the library runs
  (library_space.py), with its default budget (24 evaluations, 600 s), cut only where this
  run's time share is shorter (then said so);
- at the end, the planner's best and the best hand-picked re-timed next to each other with
  the full harness (order planner, hand, hand, planner; 100 timed calls each): the ratio of
  these re-timed speeds is the verdict (>= 0.90 passes).

Two evaluation modes (argus/agent/evaluators/gpu_worker.py), both in the worker child, after
the library's refusal and the verifier (nothing refused is measured):
- search mode, for the planner's steps and the hand-picked list: one correctness check on
  fresh inputs drawn on the device (poisoned outputs, fp64 reference), 20 timed calls
  (graphs below 50 us), the re-check (search_mode.py);
- full mode, for the re-timing only: argus.bench.evaluate as it is (2 checks, 2 same-buffer
  checks, 10 rounds of timing against torch.matmul, the re-check after timing).

Time (argus/agent/time_budget.py): the whole run has a deadline (--deadline, 420 s, process
starts included); each shape gets a share of what is left in proportion to its estimated cost
(run_estimate.py, printed at the start); inside it the planner runs FIRST, then the
hand-picked list until the re-timing's reserve (a configuration the planner measured is not
measured again), then the re-timing. No phase starts an evaluation its estimate says would
overrun. Results are written after every shape, so a run cut short keeps what it finished.
Exit status: 0 every shape of this run passes, 1 one does not (or was not reached), 2 no
GPU / no backend / a setting that would falsify the comparison.
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

from argus.agent import gemm_check_report as report_mod  # noqa: E402
from argus.agent import run_estimate  # noqa: E402
from argus.agent.evaluators import CpuEvaluator, EvaluatorUnavailable, GpuEvaluator  # noqa: E402
from argus.agent.evaluators import gpu as gpu_eval  # noqa: E402
from argus.agent.evaluators.base import Outcome  # noqa: E402
from argus.agent.gemm_config import GemmConfig  # noqa: E402
from argus.agent.library_space import LibrarySpace  # noqa: E402
from argus.agent.library_verifier import LibraryVerifier, VerifierMissing  # noqa: E402
from argus.agent.planner import DEFAULT_EVALUATIONS, DEFAULT_SECONDS, Budget, IcrlPlanner  # noqa: E402
from argus.agent.providers.embedded import EmbeddedProvider  # noqa: E402
from argus.agent.task import GemmTask, parse_gemm_shape  # noqa: E402
from argus.agent.time_budget import (AB, ABBA, MIN_PLANNER_S, RESERVE_FACTOR, Deadline,  # noqa: E402
                                     hand_phase_end, plan_shape, retime_limit, retime_order,
                                     shape_share_end)

SHAPES = ("4096x4096x4096", "8192x8192x8192", "256x8192x8192")
BAR = 0.90
DEADLINE_S = 420.0       # the device call allows 8 minutes for this run; the rest is margin
EVAL_TIMEOUT_S = 30.0    # the smallest watchdog for one configuration (raised per shape from
                         # the estimate: the full harness takes ~25 s at 8192^3)
RETIME_REPS = 100
PROBE_STEPS = 3          # planner steps before the share is planned again on measured costs
MIN_SHAPE_S = 1.0        # nor with less than this, whatever its estimated minimum (below)
MIN_PLANNER_EVALUATIONS = 4    # a shape is not started without time for this many planner
                               # steps, the hand-picked list and a two-evaluation re-timing
CALIBRATION = os.path.join(HERE, "results", "optimize_gemm.json")
# The cost model's evaluations take milliseconds; what a dry run spends is the verifier,
# which the run's own measurements (CostBook) pick up after the first evaluation.
COST_MODEL_COSTS = {m: run_estimate.EvalCost(0.05, 0.0, "cost model (no GPU): a guess, "
                                                         "then this run's measurements")
                    for m in run_estimate.MODES}

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


def kernel_key(space: LibrarySpace, cfg: GemmConfig, task: GemmTask):
    """What identifies the kernel a configuration runs: its specialisation when the library
    accepts it, else the configuration itself."""
    return ("kernel", space.specialisation(cfg, task)) if space.accepts(cfg, task) \
        else ("config", cfg.key())


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


def _cost_fields(outcome: Outcome) -> dict:
    bench = outcome.details.get("benchmark") or {}
    return {"status": outcome.status, "mode": bench.get("mode"), "time_ms": outcome.time_ms,
            "job_seconds": bench.get("job_seconds"), "wall_s": bench.get("wall_s")}


def retime(evaluator, space, task, planner_cfg: GemmConfig, hand_cfg: GemmConfig,
           order: tuple, observe=None) -> dict:
    """The two best re-timed next to each other in `order` (ABBA or AB; one kernel twice when
    both are the same kernel); their mean speeds."""
    same = kernel_key(space, planner_cfg, task) == kernel_key(space, hand_cfg, task)
    if same:
        order = ("planner",) * len(order[:2])
    runs = {"planner": [], "hand": []}
    evaluations = []
    for who in order:
        t0 = time.monotonic()
        outcome = check_and_evaluate(evaluator, space, planner_cfg if who == "planner"
                                     else hand_cfg, task)
        if observe is not None:
            observe(time.monotonic() - t0)
        runs[who].append(outcome)
        evaluations.append({"who": who, **_cost_fields(outcome)})
    if same:
        runs["hand"] = runs["planner"]
    failed = [f"{who}: {o.status}: {o.feedback[:300]}" for who, outs in runs.items()
              for o in outs if not o.ok]
    out = {"order": list(order), "same_kernel": same, "evaluations": evaluations,
           "planner_tflops_each": [o.tflops for o in runs["planner"]],
           "hand_tflops_each": [o.tflops for o in runs["hand"]],
           "torch_tflops_each": [_peer_tflops(o, task) for o in runs["planner"] + runs["hand"]]}
    if tuple(order) == AB:
        out["note"] = "shortened to planner, hand: the time left did not hold four evaluations"
    if failed:
        return {**out, "ok": False, "failures": failed}
    torch_each = [t for t in out["torch_tflops_each"] if t]
    return {**out, "ok": True,
            "planner_tflops": statistics.fmean(out["planner_tflops_each"]),
            "hand_tflops": statistics.fmean(out["hand_tflops_each"]),
            "torch_tflops": statistics.fmean(torch_each) if torch_each else None}


class ShapeRun:
    """One shape's procedure: planner, hand-picked list, re-timing (the module docstring)."""

    def __init__(self, task, evaluators, space, budget_evals, deadline, book, log):
        self.task, self.space, self.book, self.log = task, space, book, log
        self.search_eval, self.full_eval = evaluators
        self.budget_evals, self.deadline = budget_evals, deadline
        self.clock = deadline.clock
        self.hand_cfgs = hand_picked(space, task)
        self.hand_kernels = len({kernel_key(space, c, task) for c in self.hand_cfgs.values()})

    def estimate(self) -> run_estimate.ShapeEstimate:
        return run_estimate.estimate_shape(self.book, self.task, self.budget_evals,
                                           self.hand_kernels)

    def minimum_s(self) -> float:
        """The least this shape needs for a verdict: a few planner steps, the hand-picked
        list, the shortest re-timing."""
        e = self.estimate()
        return (MIN_PLANNER_EVALUATIONS + e.hand_evaluations) * e.search_s + len(AB) * e.full_s

    def run(self, totals: list[float], later_need_s: float) -> dict:
        task = self.task
        began = self.clock()
        ends = shape_share_end(self.deadline, totals, self.minimum_s())
        est = self.estimate()
        plan = plan_shape(ends - began, est.planner_s, est.hand_s, est.retime_s, DEFAULT_SECONDS)
        record = {"shape": task.shape_text, "task": task.describe(),
                  "time_share_s": round(ends - began, 1), "table_source": _table_source(task),
                  "estimate": {"search_s": round(est.search_s, 2), "full_s": round(est.full_s, 2),
                               "search_source": self.book.source("search", task),
                               "full_source": self.book.source("full", task),
                               "total_s": round(est.total_s, 1)},
                  "plan": plan.to_json()}
        self.log(f"  plan: share {plan.share_s:.0f} s = planner {plan.planner_s:.0f} s, "
                 f"hand-picked {plan.hand_s:.0f} s, re-timing reserve "
                 f"{plan.retime_reserve_s:.0f} s" + (f" ({plan.note})" if plan.note else ""))
        t0 = self.clock()
        steps, plan = self._planner(record, plan)
        planner_s = self.clock() - t0

        t0 = self.clock()
        reserve = len(ABBA) * self.book.seconds("full", task) * RESERVE_FACTOR
        self._hand_picked(record, steps, hand_phase_end(ends, self.clock(), plan, reserve))
        hand_s = self.clock() - t0

        t0 = self.clock()
        self._retime(record, retime_limit(self.deadline, ends, later_need_s))
        record["seconds"] = {"planner": round(planner_s, 2), "hand_picked": round(hand_s, 2),
                             "retime": round(self.clock() - t0, 2),
                             "total": round(self.clock() - began, 2)}
        return record

    def _planner(self, record: dict, plan) -> tuple[list, object]:
        """Runs the planner; (its steps, the plan in force after it)."""
        task, space = self.task, self.space
        start = space.smallest_valid(task)
        record["planner"] = {"start": start.to_json(), "start_short": start.short(),
                             "default_budget": {"evaluations": DEFAULT_EVALUATIONS,
                                                "seconds": DEFAULT_SECONDS},
                             "budget": {"evaluations": self.budget_evals,
                                        "seconds": round(plan.planner_s, 1)}}
        t0 = self.clock()

        def on_step(s, _traj):
            if not s.repeated and s.config is not None:
                self.book.observe("search", task, s.seconds)
            self.log(f"  [{s.index:2d}] {s.technique[:34]:34s} "
                     f"{s.config.short() if s.config else '-':48s} "
                     f"{s.outcome.status:13s} {s.outcome.tflops or 0:7.1f} TFLOP/s")

        # A few steps first: they measure what a search-mode evaluation costs on this shape;
        # then the share is planned again with that, and the planner goes on from there.
        planner = IcrlPlanner(EmbeddedProvider(), self.search_eval, task, start=start,
                              space=space, on_step=on_step,
                              budget=Budget(evaluations=min(self.budget_evals, PROBE_STEPS),
                                            seconds=plan.planner_s))
        result = planner.run()
        if result.stop_reason == "budget: evaluations" and result.evaluations < self.budget_evals:
            est = self.estimate()
            again = plan_shape(plan.share_s, est.planner_s, est.hand_s, est.retime_s,
                               DEFAULT_SECONDS)
            record["replan"] = {**again.to_json(), "search_s": round(est.search_s, 2)}
            left = again.planner_s - (self.clock() - t0)
            record["planner"]["budget"]["seconds"] = round(again.planner_s, 1)
            if left >= MIN_PLANNER_S:
                planner.budget = Budget(evaluations=self.budget_evals, seconds=left)
                result = planner.run(result.trajectory)
            else:
                result.stop_reason = "budget: seconds"
            plan = again
        best = result.trajectory.best()
        statuses = {}
        for s in result.trajectory.steps:
            statuses[s.outcome.status] = statuses.get(s.outcome.status, 0) + 1
        record["planner"].update(
            evaluations=result.evaluations, stop_reason=result.stop_reason,
            within_default_budget=result.evaluations <= DEFAULT_EVALUATIONS,
            seconds=self.clock() - t0, statuses=statuses,
            best_step=best.index if best else None,
            best_config=best.config.to_json() if best else None,
            best_short=best.config.short() if best else None,
            best_tflops=best.outcome.tflops if best else None,
            steps=[s.to_json() for s in result.trajectory.steps])
        return result.trajectory.steps, plan

    def _hand_picked(self, record: dict, steps: list, ends_at: float) -> None:
        """Each hand-picked kernel once, in the list's order: a kernel the planner measured
        takes its outcome (the same mode), others are measured while the phase's time holds
        one more evaluation; the rest are listed as not measured."""
        task, space = self.task, self.space
        by_planner = {}
        for s in steps:
            if not s.repeated and s.config is not None:
                by_planner.setdefault(kernel_key(space, s.config, task), s)
        hand, by_kernel, cut = {}, {}, []
        for name, cfg in self.hand_cfgs.items():
            key = kernel_key(space, cfg, task)
            if key in by_kernel:                  # the same kernel as an earlier entry
                hand[name] = {**hand[by_kernel[key]], "same_as": by_kernel[key]}
                self.log(f"  hand-picked {name:20s} = {by_kernel[key]}")
                continue
            by_kernel[key] = name
            entry = {"config": cfg.to_json(), "short": cfg.short()}
            step = by_planner.get(key)
            if step is not None:
                hand[name] = {**entry, **step.outcome.to_json(),
                              "measured_by": f"planner step {step.index}"}
            elif self.clock() + self.book.seconds("search", task) > ends_at:
                hand[name] = {**entry, "status": "not measured", "tflops": None,
                              "why": "the hand-picked phase's time ran out"}
                cut.append(name)
            else:
                t0 = self.clock()
                outcome = check_and_evaluate(self.search_eval, space, cfg, task)
                self.book.observe("search", task, self.clock() - t0)
                hand[name] = {**entry, **outcome.to_json()}
            h = hand[name]
            self.log(f"  hand-picked {name:20s} {cfg.short():48s} {h['status']:13s} "
                     f"{h.get('tflops') or 0:7.1f} TFLOP/s"
                     + (f" ({h['measured_by']})" if h.get("measured_by") else ""))
        ok = {k: v for k, v in hand.items() if v["status"] == "ok" and "same_as" not in v}
        best = max(ok, key=lambda k: (ok[k]["tflops"], k == "table")) if ok else None
        record.update(hand_picked=hand, hand_picked_cut=cut, best_hand_picked=best,
                      best_hand_picked_tflops=ok[best]["tflops"] if best else None)

    def _retime(self, record: dict, limit: float) -> None:
        task, space = self.task, self.space
        p = record["planner"]
        best_cfg = GemmConfig(**p["best_config"]) if p.get("best_config") else None
        best_name = record["best_hand_picked"]
        if best_cfg is None or best_name is None:
            record["retimed"] = {"ok": False, "failures": [
                "no correct configuration to compare" + ("" if best_cfg else " from the planner")]}
        else:
            order = retime_order(self.clock(), limit, self.book.seconds("full", task))
            if not order:
                record["retimed"] = {"ok": False, "failures": [
                    f"no re-timing: {max(0.0, limit - self.clock()):.0f} s left for it, two "
                    f"full-harness evaluations need ~{2 * self.book.seconds('full', task):.0f} s"]}
            else:
                hand_cfg = GemmConfig(**record["hand_picked"][best_name]["config"])
                self.log(f"  re-timing ({', '.join(order)}) planner {best_cfg.short()} vs "
                         f"{best_name}")
                record["retimed"] = retime(
                    self.full_eval, space, task, best_cfg, hand_cfg, order,
                    observe=lambda s: self.book.observe("full", task, s))
        retimed = record["retimed"]
        ratio = retimed["planner_tflops"] / retimed["hand_tflops"] if retimed["ok"] else None
        hand_tflops = record["best_hand_picked_tflops"]
        why_not = None
        if record["hand_picked_cut"]:
            why_not = "not every hand-picked configuration was measured"
        elif ratio is None:
            why_not = "; ".join(retimed.get("failures", []))[:500]
        elif ratio < BAR:
            why_not = f"ratio below {BAR:.2f}"
        record.update(ratio_to_best_hand_picked=ratio,
                      first_pass_ratio=(p["best_tflops"] / hand_tflops
                                        if p.get("best_tflops") and hand_tflops else None),
                      passes=why_not is None, why_not=why_not)


def _load(path: str) -> dict | None:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _write(record: dict, out: str) -> None:
    record.update(report_mod.verdicts(record, SHAPES))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(record, f, indent=1, default=str)
    with open(os.path.splitext(out)[0] + ".md", "w") as f:
        f.write(report_mod.markdown(record))


def combine(paths: list[str], out: str) -> int:
    """Results files (one or more shapes each, all measured or all cost model) into `out`;
    later files win for a shape they share."""
    records = [r for r in (_load(p) for p in paths)]
    bad = [p for p, r in zip(paths, records) if r is None]
    if bad:
        print(f"optimize_gemm: cannot read {', '.join(bad)} as results JSON", file=sys.stderr)
        return 2
    if len({bool(r.get("measured")) for r in records}) > 1:
        print("optimize_gemm: --combine mixes measured and cost-model results; combine each "
              "kind on its own", file=sys.stderr)
        return 2
    combined = dict(records[-1])
    shapes: list[dict] = []
    for r in records:
        fresh = [{**s, "run": s.get("run") or report_mod.run_info(r)} for s in r.get("shapes", [])]
        shapes = report_mod.merged_shapes({"shapes": shapes}, fresh, SHAPES)
    combined.update(shapes=shapes, combined_from=paths)
    _write(combined, out)
    print(f"wrote {out} and {os.path.splitext(out)[0]}.md ({len(shapes)} shapes)")
    print("\n".join(report_mod.table_lines(combined)))
    return 0 if combined["all_pass"] else 1


def default_verify_workers() -> int:
    cores = os.cpu_count() or 1
    return min(8, cores // 2) if cores >= 8 else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", action="append", help="MxNxK (repeatable; default three)")
    parser.add_argument("--budget", type=int, default=DEFAULT_EVALUATIONS,
                        help="planner evaluations per shape (default: the planner's default)")
    parser.add_argument("--deadline", type=float, default=DEADLINE_S,
                        help="seconds for the whole run, shared by the shapes (default 420)")
    parser.add_argument("--eval-timeout", type=float, default=EVAL_TIMEOUT_S,
                        help="the smallest watchdog seconds for one configuration (default 30; "
                             "raised per shape from the estimate)")
    parser.add_argument("--verify-workers", type=int, default=default_verify_workers(),
                        help="processes verifying the planner's next candidates in parallel")
    parser.add_argument("--cost-model", action="store_true",
                        help="dry run on the CPU cost model instead of measuring")
    parser.add_argument("--merge", action="store_true",
                        help="keep the other shapes already in the output file")
    parser.add_argument("--combine", nargs="+", metavar="JSON",
                        help="write these results files' shapes into --out; measure nothing")
    parser.add_argument("--estimate", action="store_true",
                        help="print the expected seconds per shape and exit")
    parser.add_argument("--calibration", default=CALIBRATION,
                        help="a measured results file whose evaluation times calibrate the "
                             "estimates (default benchmarks/results/optimize_gemm.json)")
    parser.add_argument("--out", help="JSON path (default benchmarks/results/optimize_gemm"
                                      "[_cost_model].json); the report is the same path .md")
    return parser


def estimate_lines(book, shapes, budget: int, deadline_s: float) -> list[str]:
    """The printed estimate: per shape, and the total against the deadline (the hand-picked
    count is its upper bound: aliases are only known once the space is built)."""
    hand = 1 + len(HAND_WRITTEN)
    ests = [run_estimate.estimate_shape(book, t, budget, hand) for t in shapes]
    total = run_estimate.WORKER_START_S + sum(e.total_s for e in ests)
    sources = sorted({book.source(m, t) for t in shapes for m in run_estimate.MODES})
    lines = [f"estimate ({'; '.join(sources)}):", *("  " + e.line() for e in ests),
             f"  total ~{total:.0f} s with the worker's start; deadline {deadline_s:.0f} s"]
    if total * RESERVE_FACTOR > deadline_s:
        lines.append(f"  WARNING: {RESERVE_FACTOR:g} x the estimate ({total * RESERVE_FACTOR:.0f} s)"
                     f" exceeds the deadline: the planner's shares will be cut; run the shapes "
                     f"in separate calls (scripts/device_agent.sh SHAPE, --merge)")
    return lines


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    measured = not args.cost_model
    out = args.out or os.path.join(HERE, "results", "optimize_gemm.json" if measured
                                   else "optimize_gemm_cost_model.json")
    if args.combine:
        return combine(args.combine, out)
    shapes = [parse_gemm_shape(s) for s in (args.shape or SHAPES)]
    calibration = _load(args.calibration) if measured else None
    book = run_estimate.CostBook(run_estimate.calibrate(calibration) if measured
                                 else COST_MODEL_COSTS)
    lines = estimate_lines(book, shapes, args.budget, args.deadline)
    if args.estimate:
        print("\n".join(lines))
        return 0
    print("\n".join(lines), file=sys.stderr)
    deadline = Deadline(args.deadline)
    if os.environ.get("ARGUS_GEMM_CONFIG"):
        print("optimize_gemm: ARGUS_GEMM_CONFIG is set; it overrides every configuration "
              "argus.ops.matmul builds, so the comparison would be false. Unset it.",
              file=sys.stderr)
        return 2
    space = LibrarySpace(verifier=LibraryVerifier(args.verify_workers))
    bench = None
    if measured:
        try:
            bench = gpu_eval.default_benchmark(timeout_s=args.eval_timeout, reps=RETIME_REPS)
        except EvaluatorUnavailable as err:
            print(f"optimize_gemm: this benchmark needs a GPU: {err}. Run it on the H200, "
                  f"or pass --cost-model for a CPU dry run.", file=sys.stderr)
            return 2
        bench.limit = lambda: deadline.left() + 2.0

    def evaluators(task):
        if bench is None:
            return CpuEvaluator(), CpuEvaluator()
        search_timeout = max(args.eval_timeout, 4 * book.seconds("search", task))
        full_timeout = max(args.eval_timeout, 3 * book.seconds("full", task))
        return (GpuEvaluator(functools.partial(bench, mode="search", timeout_s=search_timeout),
                             space=space, library=True),
                GpuEvaluator(functools.partial(bench, mode="full", reps=RETIME_REPS,
                                               timeout_s=full_timeout),
                             space=space, library=True))

    record = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
              "measured": measured,
              "procedure": report_mod.PROCEDURE if measured else "cpu cost model",
              "evaluator": ("gpu: argus.ops.matmul in one worker child (gpu_session): search "
                            "mode for the search, the full harness for the re-timing; library "
                            "refusals and verifier first")
              if measured else "cpu cost model (predictions, NOT measurements)",
              "bar": BAR, "budget": args.budget, "deadline_s": args.deadline,
              "hand_written": HAND_WRITTEN, "estimate": lines,
              "environment": {"python": platform.python_version(), "host": platform.node(),
                              "git": _git_commit(), "cpus": os.cpu_count()},
              "shapes": [], "costs": {}}
    previous = None
    if args.merge:
        previous = _load(out)
        if previous is not None and bool(previous.get("measured")) != measured:
            previous = None
        if previous is not None:
            record["merged_from"] = previous.get("date")
    finished = []
    try:
        try:
            space.smallest_valid(shapes[0])
        except VerifierMissing as err:
            print(f"optimize_gemm: {err}", file=sys.stderr)
            return 2
        record["space"] = space.describe(shapes[0])
        runs = [ShapeRun(t, evaluators(t), space, args.budget, deadline, book,
                         lambda line: print(line, file=sys.stderr)) for t in shapes]
        for run in runs:               # verify what every shape starts with, in parallel
            space.prefetch([c for c in run.hand_cfgs.values() if space.accepts(c, run.task)],
                           run.task)
        for i, run in enumerate(runs):
            task = run.task
            print(f"{task.shape_text}: ({deadline.left():.0f} s left)", file=sys.stderr)
            need = run.minimum_s()
            if deadline.left() < max(MIN_SHAPE_S, need):
                result = {"shape": task.shape_text, "passes": False,
                          "skipped": f"not started: {deadline.left():.0f} s of the run's "
                                     f"deadline were left, it needs at least ~{need:.0f} s "
                                     f"(estimate); run it in its own call"}
            else:
                totals = [r.estimate().total_s for r in runs[i:]]
                later = sum(r.minimum_s() for r in runs[i + 1:])
                result = run.run(totals, later)
            finished.append(result)
            if bench is not None:
                record["environment"]["worker"] = bench.session.environment
            for r in finished:
                r["run"] = report_mod.run_info(record)
            record["shapes"] = report_mod.merged_shapes(previous, finished, SHAPES)
            record["costs"] = {"wall_s": deadline.elapsed(),
                               "worker_starts": bench.session.starts if bench else [],
                               "verifier": space.verifier.stats()}
            _write(record, out)
            print(f"{task.shape_text}: ratio "
                  f"{report_mod.fmt(result.get('ratio_to_best_hand_picked'), '.3f')} "
                  f"({report_mod.verdict_word(result)})", file=sys.stderr)
    finally:
        space.verifier.close()
        if bench is not None:
            bench.close()
    print(f"wrote {out} and {os.path.splitext(out)[0]}.md ({deadline.elapsed():.0f} s)")
    print("\n".join(report_mod.table_lines(record)))
    return 0 if finished and all(r.get("passes") for r in finished) else 1


if __name__ == "__main__":
    sys.exit(main())
