"""H200 check of the kernel tasks' GPU evaluator (issue 20): each start kernel judged on the
GPU as `argus optimize ... --evaluator gpu` judges a candidate (built, run on every input
set against the reference, the first set timed with device events, one launch profiled by
Nsight Compute for the signals), next to its interpreter + cost-model judgement.

    python scripts/device_kernel_task_gpu.py --out DIR

Writes DIR/kernel-task-gpu-<date>.json: per task the GPU outcome (status, time, signals,
feedback) and the CPU outcome's estimate."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TASKS = [("examples/copy.py", "copy", {"M": 4096, "N": 4096}),
         ("examples/gemm.py", "gemm", {"M": 1024, "N": 1024, "K": 1024}),
         ("examples/flash_attention.py", "flash_fwd", {"T": 1024})]


def main() -> int:
    from argus.agent.tasks.file_task import file_task

    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="out/device")
    parser.add_argument("--cpu-too", action="store_true", help="also the interpreter's run")
    args = parser.parse_args()
    rows = []
    for path, kernel, shape in TASKS:
        print(f"== {path}::{kernel} {shape}", flush=True)
        task = file_task(REPO / path, kernel, shape, sets=2)
        task.device = "cuda"
        gpu = task.evaluate(REPO / path)
        row = {"task": f"{path}::{kernel}", "shape": shape, "gpu": {
            "status": gpu.status, "time_ms": gpu.time_ms, "source": gpu.source,
            "signals": gpu.details.get("signals"), "feedback": gpu.feedback,
            "profile": {k: v for k, v in gpu.details.get("profile", {}).items()
                        if k != "metrics"}}}
        print(json.dumps(row["gpu"], indent=1), flush=True)
        if args.cpu_too:
            task.device = "cpu"
            cpu = task.evaluate(REPO / path)
            row["cpu"] = {"status": cpu.status, "time_ms": cpu.time_ms, "source": cpu.source}
        rows.append(row)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    (out / f"kernel-task-gpu-{stamp}.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if all(r["gpu"]["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
