"""Issue 20 on a GPU: a coder round's samples judged side by side on the local pool, their
runs timed on the GPU as "time" jobs (one single-process pool per GPU, so two candidates
are never timed at once on one GPU), against the same round judged one by one.

The scenario is the coder tests' (tests/agent/coding/test_judge_jobs.py), with the task on
the GPU: attention at T=256 from the deliberately slow one-stage kernel; a scripted model
proposes a two-stage kernel and a broken one in one round of two samples. The broken one is
rejected by its check and never run; the two-stage one is measured and becomes the best.

    python scripts/device_judge_gpu.py --out DIR [--device cpu]

Writes DIR/judge-gpu-<date>.json: per mode (serial, pool) the steps (index, technique,
status, source of the time, time) and, for the pool, the jobs per worker (the report a
parallel run shows). Exit 1 when the two modes disagree or the best is not the two-stage
kernel."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def run(device: str, backend, work: Path):
    from argus.agent.coding.kernel_planner import KernelPlanner
    from argus.agent.planner import Budget
    from argus.agent.tasks.file_task import op_task
    from tests.agent.coding.replies import SLOW, STOP, file_reply
    from tests.agent.scripted import ScriptedProvider

    slow = SLOW.read_text()
    fast = slow.replace("S: const = 1,", "S: const = 2,")
    broken = slow.replace("wgmma_wait(0)", "wgmma_wait(5)", 1)
    script = [file_reply(fast, "two-stage"), file_reply(broken, "broken"), STOP, STOP]
    task = op_task("attention", {"T": 256}, start=SLOW)
    task.device = device
    planner = KernelPlanner(ScriptedProvider(script), task, budget=Budget(evaluations=5),
                            samples=2, work_dir=str(work), backend=backend)
    result = planner.run()
    steps = [{"index": s.index, "technique": s.technique, "status": s.outcome.status,
              "source": s.outcome.source, "time_ms": s.outcome.time_ms}
             for s in result.steps]
    return steps, result.best.index if result.best else None, result.best_source == fast


def main() -> int:
    from argus.agent.parallel import LocalPoolBackend

    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="out/device")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = parser.parse_args()
    report = {"device": args.device}
    with tempfile.TemporaryDirectory(prefix="argus-judge-") as tmp:
        steps, best, is_fast = run(args.device, None, Path(tmp, "serial"))
        report["serial"] = {"steps": steps, "best": best, "best_is_two_stage": is_fast}
        print(json.dumps(report["serial"], indent=1), flush=True)
        with LocalPoolBackend(workers=2) as pool:
            steps, best, is_fast = run(args.device, pool, Path(tmp, "pool"))
            jobs = pool.workers()
        report["pool"] = {"steps": steps, "best": best, "best_is_two_stage": is_fast,
                          "jobs_per_worker": jobs}
        print(json.dumps(report["pool"], indent=1), flush=True)
    same = [(s["index"], s["technique"], s["status"]) for s in report["serial"]["steps"]] == \
        [(s["index"], s["technique"], s["status"]) for s in report["pool"]["steps"]]
    report["same_steps"] = same
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    (out / f"judge-gpu-{stamp}.json").write_text(json.dumps(report, indent=1) + "\n")
    ok = same and report["pool"]["best_is_two_stage"] and report["serial"]["best_is_two_stage"]
    print(f"same steps serial and pool: {same}; best is the two-stage kernel: "
          f"{report['pool']['best_is_two_stage']}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
