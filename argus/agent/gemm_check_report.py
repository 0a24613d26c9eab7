"""The report of issue 8's H200 check (benchmarks/optimize_gemm.py): per-shape records
merged across runs, the verdict, the printed table and the markdown.

A results file holds one record per shape. Runs may measure the shapes separately (one
device call each: `optimize_gemm.py --shape S --merge`); a merged file keeps, per shape,
the run that measured it (`run`: date, git commit, device, procedure), so a shape measured
earlier, or by an older procedure, says so. `criterion_met` is true only when every shape
of the criterion is in the file and passes, all measured on a GPU.
"""
from __future__ import annotations

import json

from argus.agent.gemm_config import GemmConfig

# What produced a shape's numbers; older files carry no `procedure` (the first one).
PROCEDURE = ("search mode for the planner and the hand-picked list, full harness for the "
             "re-timing")
FIRST_PROCEDURE = "full harness for every evaluation (the H200 run of 2026-12-02)"


def run_info(record: dict) -> dict:
    """Where a run's shapes come from: its date, commit, device and procedure."""
    env = record.get("environment") or {}
    return {"date": record.get("date"), "git": env.get("git"),
            "device": (env.get("worker") or {}).get("device_name")
            or ("none (cost model)" if not record.get("measured") else None),
            "procedure": record.get("procedure", FIRST_PROCEDURE)}


def merged_shapes(previous: dict | None, fresh: list[dict], order: tuple) -> list[dict]:
    """`fresh` shape records replacing those of `previous` (a results file of the same kind,
    measured or not) for the same shapes; shapes of `order` first in that order, others
    after in the order met. Records of `previous` without `run` get its run info."""
    kept = {}
    if previous is not None:
        for shape in previous.get("shapes", []):
            kept[shape["shape"]] = {"run": run_info(previous), **shape}
    for shape in fresh:
        kept[shape["shape"]] = shape
    named = [kept.pop(s) for s in order if s in kept]
    return named + list(kept.values())


def verdicts(record: dict, criterion_shapes: tuple) -> dict:
    """all_pass (every shape in the file passes), criterion_met and what is missing."""
    shapes = record.get("shapes", [])
    passed = {r["shape"] for r in shapes if r.get("passes")}
    missing = [s for s in criterion_shapes if s not in {r["shape"] for r in shapes}]
    return {"all_pass": bool(shapes) and len(passed) == len(shapes),
            "criterion_missing": missing,
            "criterion_met": bool(record.get("measured")) and not missing
            and all(s in passed for s in criterion_shapes)}


def fmt(value, spec=".1f") -> str:
    return format(value, spec) if isinstance(value, (int, float)) else "-"


def verdict_word(shape: dict) -> str:
    if shape.get("passes"):
        return "pass"
    return "NOT RUN" if shape.get("skipped") else "FAIL"


def table_lines(record: dict) -> list[str]:
    head = (f"{'shape':16s} {'best hand-picked':20s} {'TFLOP/s':>8s} {'planner best':48s} "
            f"{'TFLOP/s':>8s} {'ratio':>6s} {'torch':>7s} {'evals':>5s}  verdict")
    lines = [head]
    for r in record["shapes"]:
        rt = r.get("retimed") or {}
        p = r.get("planner") or {}
        lines.append(f"{r['shape']:16s} {str(r.get('best_hand_picked')):20s} "
                     f"{fmt(rt.get('hand_tflops')):>8s} {str(p.get('best_short')):48s} "
                     f"{fmt(rt.get('planner_tflops')):>8s} "
                     f"{fmt(r.get('ratio_to_best_hand_picked'), '.3f'):>6s} "
                     f"{fmt(rt.get('torch_tflops')):>7s} {str(p.get('evaluations', '-')):>5s}  "
                     f"{verdict_word(r)}")
    return lines


def _headline(record: dict) -> str:
    if record.get("criterion_met"):
        return "the criterion is met (every shape passes)"
    missing = record.get("criterion_missing") or []
    if missing:
        return f"NOT met: {', '.join(missing)} not measured yet"
    return "NOT met: not every shape passes"


HOW_TO_READ = (
    "How to read it: the verdict comes only from the **full harness** (argus.bench.evaluate: "
    "2 checks over both input distributions, 2 same-buffer checks, 10 timing rounds, the "
    "re-check): `TFLOP/s` in the table are the re-timed means (order planner, hand, hand, "
    "planner, or planner, hand where time was short; the median of 100 timed calls each), "
    "`ratio` = planner / best hand-picked, `torch` = torch.matmul timed in the same runs. "
    "Every other number (the hand-picked TFLOP/s, the planner's steps and rewards, "
    "`first_pass_ratio`) is **search mode** (one check on inputs drawn on the device, 20 "
    "timed calls, the re-check): it only chose which two configurations to re-time. `evals` = "
    "the planner's evaluations (default budget 24, the start included).")


def markdown(record: dict) -> str:
    kind = "measured on the GPU" if record["measured"] else \
        "the CPU cost model's PREDICTIONS (not measurements)"
    out = [f"# Issue 8: embedded planner vs hand-picked GEMM configurations ({kind})", "",
           f"Bar: planner >= {record['bar']:.2f} x the best hand-picked, both re-timed side by "
           f"side at the end. Verdict: **{_headline(record)}**.", "",
           "```", *table_lines(record), "```", "", HOW_TO_READ, ""]
    runs = {}
    for r in record["shapes"]:
        run = r.get("run") or {}
        runs.setdefault(json.dumps(run, sort_keys=True), []).append(r["shape"])
    for text, shapes in runs.items():
        run = json.loads(text)
        out.append(f"- {', '.join(shapes)}: run of {run.get('date')}, git {run.get('git')}, "
                   f"device {run.get('device')}; procedure: {run.get('procedure')}.")
    costs = record.get("costs") or {}
    out += ["", f"Latest run: {fmt(costs.get('wall_s'), '.0f')} s wall (deadline "
                f"{fmt(record.get('deadline_s'), '.0f')} s); worker starts "
                f"{costs.get('worker_starts')}; verifier {costs.get('verifier')}.", ""]
    for r in record["shapes"]:
        out += _shape_section(r)
    return "\n".join(out) + "\n"


def _plan_text(r: dict) -> str:
    def one(plan: dict) -> str:
        return (f"planner {fmt(plan.get('planner_s'), '.0f')} s, hand-picked "
                f"{fmt(plan.get('hand_s'), '.0f')} s, re-timing reserve "
                f"{fmt(plan.get('retime_reserve_s'), '.0f')} s")

    text = "planned " + one(r.get("plan") or {})
    if r.get("replan"):
        text += (f", planned again after the first steps (search mode "
                 f"{fmt(r['replan'].get('search_s'), '.2f')} s each): {one(r['replan'])}")
    return text


def _shape_section(r: dict) -> list[str]:
    if r.get("skipped"):
        return [f"## {r['shape']}", "", f"Not run: {r['skipped']}.", ""]
    p = r.get("planner", {})
    plan = r.get("plan") or {}
    out = [f"## {r['shape']}", "",
           f"Start (the library's smallest valid configuration): `{p.get('start_short')}`. "
           f"Planner: {p.get('evaluations', 0)} evaluations, stop: {p.get('stop_reason')}, "
           f"budget {p.get('budget')}; best `{p.get('best_short')}` at step "
           f"{p.get('best_step')}. Time share {r.get('time_share_s')} s: {_plan_text(r)}; "
           f"used {r.get('seconds')}." + (f" {plan['note']}." if plan.get("note") else ""), "",
           f"The shape table's choice (`table`) is {r.get('table_source')}.", "",
           "| hand-picked | configuration | status | TFLOP/s (search) |", "|---|---|---|---|"]
    for name, h in r.get("hand_picked", {}).items():
        if "same_as" in h:
            out.append(f"| {name} | same kernel as {h['same_as']} | | |")
            continue
        status = h["status"] + (f" ({h['measured_by']})" if h.get("measured_by") else "")
        out.append(f"| {name} | `{h['short']}` | {status} | {fmt(h.get('tflops'))} |")
    if r.get("hand_picked_cut"):
        out += ["", f"Not measured (the hand-picked phase's time ran out): "
                    f"{', '.join(r['hand_picked_cut'])}; the shape cannot pass."]
    out += ["", "| step | technique | configuration | status | TFLOP/s (search) | reward |",
            "|---|---|---|---|---|---|"]
    for s in p.get("steps", []):
        short = GemmConfig(**s["config"]).short() if s.get("config") else "-"
        out.append(f"| {s['index']} | {s['technique']} | `{short}` | "
                   f"{s['outcome']['status']} | {fmt(s['outcome'].get('tflops'))} | "
                   f"{s['reward']:.3f} |")
    rt = r.get("retimed", {})
    keys = ("order", "same_kernel", "planner_tflops_each", "hand_tflops_each", "note",
            "failures")
    out += ["", f"Re-timed (full harness): {json.dumps({k: rt.get(k) for k in keys if k in rt})}",
            f"Ratio {fmt(r.get('ratio_to_best_hand_picked'), '.3f')} (search mode's "
            f"{fmt(r.get('first_pass_ratio'), '.3f')}): **{verdict_word(r)}**"
            + (f" ({r['why_not']})" if r.get("why_not") else "") + ".", ""]
    return out
