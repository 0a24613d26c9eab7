"""Issue 20's last item on the H200: does the embedded attention planner reach 90% of the
best configuration within its default budget? For each shape:

  B  the planner (argus.agent.attention.optimize.run_episode, the GPU evaluator, the
     default budget, a fresh tuned cache; its candidates' kernels built as it goes);
  A  every configuration of the space (the cost model's fastest first, so a deadline cuts
     the least promising), built in a process pool, then each checked against
     torch SDPA (fresh inputs, poisoned outputs) and timed by the same evaluator: the
     exhaustive best (and the best of the named hand-picked list, HAND_PICKED);
  C  the planner's best and the exhaustive best re-timed in alternating rounds.

planner_ratio = best time / planner time (phase A's best against phase B's pick, both as
measured in their phase); planner_ratio_retimed is the same from phase C's medians. The JSON
(benchmarks/results/attention-planner-<date>.json unless --out) is written after every
shape; progress lines are flushed, so a timeout keeps what was done.

    python scripts/device_attention_planner.py [--shapes 4x16x16x4096x4096x128,...]
        [--deadline-s 540] [--workers N] [--out FILE]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MAX_FAILING = 8        # errors/crashes in a row after which the exhaustive phase stops
SHAPES = "4x16x16x4096x4096x128,4x16x16x4096x4096x128c,16x16x16x1024x1024x64"
# named configurations of the kernel's documentation and sweep (benchmarks/attention_sweep.py)
HAND_PICKED = {
    "library_default": None,                     # what argus.ops.attention runs (config_for)
    "mask_all": {"MASK": "all"},
    "no_split_kv": {"SPLIT_KV": 0},
    "fold_scale": {"FOLD_SCALE": 1},
    "overlap_bn64": {"OVERLAP": 1, "BN": 64},
    "lpt": {"LPT": 1},
    "bn64": {"BN": 64},
    "stages3": {"S": 3},
    "fold_lpt": {"FOLD_SCALE": 1, "LPT": 1},
    "fold_lpt_s3": {"FOLD_SCALE": 1, "LPT": 1, "S": 3},
}


def log(*parts):
    print(*parts, flush=True)


def hand_picked(space, task):
    from dataclasses import replace

    base = space.library_default(task)
    out = {}
    for name, knobs in HAND_PICKED.items():
        cfg = space.canonical(replace(base, **(knobs or {})), task)
        out[name] = cfg
    return out


def outcome_row(cfg, outcome):
    return {"config": cfg.to_json(), "status": outcome.status, "time_ms": outcome.time_ms,
            "tflops": outcome.tflops, "feedback": outcome.feedback[:300]}


def retime(evaluator, task, configs: dict, rounds: int) -> dict:
    """name -> median of `rounds` alternating evaluations (each a fresh check + timing)."""
    times = {name: [] for name in configs}
    for _ in range(rounds):
        for name, cfg in configs.items():
            o = evaluator.evaluate(cfg, task)
            if o.ok:
                times[name].append(o.time_ms)
    return {name: (sorted(t)[len(t) // 2] if t else None) for name, t in times.items()}


def run_shape(text, evaluator_for, workers, deadline, results, build_check=True):
    """One shape's phases; `deadline` (a monotonic time) bounds the exhaustive phase."""
    from argus.agent.attention.optimize import run_episode
    from argus.agent.attention.planner import default_budget
    from argus.agent.attention.space import AttentionSpace, describe_space
    from argus.agent.attention.task import parse_attention_shape
    from argus.ops import attention_tuned

    task = parse_attention_shape(text)
    row = {"shape": task.shape_text, "task": task.describe()}
    results["shapes"].append(row)
    space = AttentionSpace(build_check=build_check, workers=workers)
    evaluator = evaluator_for(space)
    row["space"] = describe_space(space, task)

    # B: the planner, first (nothing measured before it helps it; main() emptied the cache)
    budget = default_budget()
    episode = run_episode(task, budget=budget, chosen=evaluator, close=False, space=space,
                          on_step=lambda s, _: log(f"  B[{s.index:2d}] {s.outcome.status:12s} "
                                                   f"{s.outcome.time_ms or 0:8.4f} ms "
                                                   f"{s.config.short()} ({s.seconds:.1f} s)"))
    summary = episode["summary"]
    run = episode["run"]
    row["planner"] = {"config": (summary["best"] or {}).get("config"),
                      "time_ms": (summary["best"] or {}).get("time_ms"),
                      "seconds": summary["seconds"], "evaluations": summary["evaluations"],
                      "budget": summary["budget"], "stop_reason": summary["stop_reason"],
                      "candidates_tried": [outcome_row(s.config, s.outcome) for s in run.steps],
                      "start": summary["start"], "tune_cache_key": summary["tune_cache_key"],
                      "tune_cache_note": summary["tune_cache_note"]}
    key = summary["tune_cache_key"]
    row["planner"]["ops_reads_winner"] = bool(
        key and attention_tuned.tuned_knobs(key) == row["planner"]["config"])
    log(f"{task.shape_text}: planner {row['planner']['time_ms']} ms in "
        f"{summary['evaluations']} evaluations, {summary['seconds']:.0f} s "
        f"({summary['stop_reason']})")

    # A: every configuration of the space, the model's fastest first (a deadline cuts the
    # least promising)
    from argus.agent.attention.cost_model import rank

    accepted = [c for _, c in rank(list(space.all_accepted(task)), task)]
    # the named hand-picked configurations first: the bar is against the best of them,
    # so a deadline never leaves them untimed
    picked = {c.key() for c in hand_picked(space, task).values()}
    accepted = ([c for c in accepted if c.key() in picked]
                + [c for c in accepted if c.key() not in picked])
    total = len(accepted)
    build_s = space.prefetch(accepted, task, log=log)
    rows, done, failing = [], 0, 0
    t_a = time.monotonic()
    if run.best() is None:
        row["exhaustive_note"] = "skipped: no configuration of the planner's ran correctly"
        accepted = []
    for cfg in accepted:
        if time.monotonic() > deadline:
            row["exhaustive_note"] = "stopped at the shape's share of the deadline"
            break
        if failing >= MAX_FAILING:
            row["exhaustive_note"] = f"stopped after {failing} failed evaluations in a row"
            break
        errors = space.build_errors(cfg, task)
        if errors:
            rows.append({"config": cfg.to_json(), "status": "invalid",
                         "feedback": errors[0][:300]})
            continue
        outcome = evaluator.evaluate(cfg, task)
        rows.append(outcome_row(cfg, outcome))
        failing = 0 if outcome.status in ("ok", "incorrect") else failing + 1
        done += 1
        if done % 20 == 0:
            log(f"  A {done} timed, {time.monotonic() - t_a:.0f} s")
    ok = [r for r in rows if r["status"] == "ok" and r["time_ms"]]
    best = min(ok, key=lambda r: r["time_ms"]) if ok else None
    names = hand_picked(space, task)
    by_key = {tuple(r["config"].values()): r for r in rows}
    hand = {n: by_key.get(c.key(), {"status": "not timed"}) for n, c in names.items()}
    hand_ok = {n: r for n, r in hand.items() if r.get("status") == "ok" and r.get("time_ms")}
    best_hand = min(hand_ok, key=lambda n: hand_ok[n]["time_ms"]) if hand_ok else None
    row["exhaustive"] = {"configurations": total, "timed": done,
                         "complete": len(rows) == total, "build_seconds": build_s,
                         "seconds": time.monotonic() - t_a,
                         "statuses": {s: sum(r["status"] == s for r in rows)
                                      for s in sorted({r["status"] for r in rows})},
                         "best": best, "rows": rows}
    row["hand_picked"] = {"best_name": best_hand,
                          "best": hand_ok.get(best_hand) if best_hand else None,
                          "rows": {n: {"config": names[n].to_json(), **r} for n, r in hand.items()}}
    p_ms = row["planner"]["time_ms"]
    row["best_time_ms"] = best["time_ms"] if best else None
    row["planner_ratio"] = (best["time_ms"] / p_ms) if best and p_ms else None
    row["planner_ratio_vs_hand_picked"] = (hand_ok[best_hand]["time_ms"] / p_ms
                                           if best_hand and p_ms else None)
    row["planner_in_exhaustive_rank"] = (1 + sum(r["time_ms"] < p_ms for r in ok)
                                         if p_ms else None)

    # C: re-time the planner's pick against the exhaustive best, alternating
    if best and p_ms and time.monotonic() < deadline:
        from argus.agent.attention.config import AttentionConfig

        pair = {"planner": AttentionConfig.from_json(row["planner"]["config"]),
                "exhaustive_best": AttentionConfig.from_json(best["config"])}
        medians = retime(evaluator, task, pair, 3)
        row["retimed_ms"] = medians
        if medians["planner"] and medians["exhaustive_best"]:
            row["planner_ratio_retimed"] = medians["exhaustive_best"] / medians["planner"]
    space.close()
    row["meets_90"] = bool(row["planner_ratio"] and row["planner_ratio"] >= 0.9)
    log(f"{task.shape_text}: exhaustive best {row['best_time_ms']} ms "
        f"({best and best['config']}), planner {p_ms} ms, ratio {row['planner_ratio']}, "
        f"retimed {row.get('planner_ratio_retimed')}, hand-picked best {best_hand}")
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=SHAPES)
    p.add_argument("--deadline-s", type=float, default=540.0,
                   help="stop starting exhaustive timings after this many seconds")
    p.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    p.add_argument("--out", default="")
    p.add_argument("--evaluator", choices=("gpu", "cpu"), default="gpu",
                   help="cpu: a dry run of the plumbing with the cost model (no timings)")
    p.add_argument("--no-build-probe", action="store_true",
                   help="do not build the kernels to refuse what ptxas refuses (dry runs)")
    args = p.parse_args(argv)
    import torch

    from argus.agent.attention.evaluators import (WORKER, CpuAttentionEvaluator,
                                                  GpuAttentionEvaluator)
    from argus.agent.evaluators.gpu_session import WorkerSession

    if args.evaluator == "gpu" and not torch.cuda.is_available():
        print("device_attention_planner: no CUDA GPU here (nothing measured; --evaluator cpu "
              "for a dry run)", file=sys.stderr)
        return 2

    began = time.monotonic()
    deadline = began + args.deadline_s
    now = dt.datetime.now(dt.timezone.utc)
    out = args.out or os.path.join("benchmarks", "results",
                                   f"attention-planner-{now.strftime('%Y%m%d-%H%M%S')}.json")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    gpu = args.evaluator == "gpu"
    session = WorkerSession("cuda", module=WORKER) if gpu else None
    results = {"date": now.isoformat(timespec="seconds"),
               "gpu": torch.cuda.get_device_name() if gpu else "none: cost-model dry run",
               "torch": torch.__version__, "evaluator": args.evaluator, "shapes": [],
               "method": __doc__.split("\n\n")[1].strip()}

    def evaluator_for(space):
        return GpuAttentionEvaluator(space, session=session, timeout_s=30.0) if gpu else \
            CpuAttentionEvaluator(space)

    from argus.ops import attention_tuned

    attention_tuned.default_path().unlink(missing_ok=True)      # a fresh tuned cache
    attention_tuned.forget()

    failed = 0
    shapes = args.shapes.split(",")
    try:
        for i, text in enumerate(shapes):
            # each shape's exhaustive phase stops at its share of what is left
            share_end = time.monotonic() + (deadline - time.monotonic()) / (len(shapes) - i)
            try:
                run_shape(text, evaluator_for, args.workers, share_end, results,
                          not args.no_build_probe)
            except Exception as exc:          # noqa: BLE001 - one shape's failure is data
                import traceback
                failed += 1
                results["shapes"].append({"shape": text, "error": f"{type(exc).__name__}: {exc}",
                                          "traceback": traceback.format_exc()[-3000:]})
                log(f"{text}: FAILED {type(exc).__name__}: {exc}")
            results["seconds"] = time.monotonic() - began
            results["worker_starts"] = session.starts if session else []
            results["tuned_cache"] = attention_tuned.current_cache().entries()
            with open(out, "w") as f:
                json.dump(results, f, indent=1, default=str)
            log(f"wrote {out} ({results['seconds']:.0f} s so far)")
    finally:
        if session:
            session.close()
    ratios = [r.get("planner_ratio") for r in results["shapes"]]
    log("planner_ratio per shape: " + ", ".join(f"{r:.3f}" if r else "-" for r in ratios))
    return 1 if failed or not all(r and r >= 0.9 for r in ratios) else 0


if __name__ == "__main__":
    sys.exit(main())
