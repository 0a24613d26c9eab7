"""H200 check of the kernel tasks' GPU evaluator (issue 20): each start kernel judged on the
GPU as `argus optimize ... --evaluator gpu` judges a candidate (built, run on every input
set against the reference, the first set timed with device events, one launch profiled by
Nsight Compute for the signals), next to its interpreter + cost-model judgement.

Then each KernelBench fixture's answer (tests/fixtures/kernelbench: a ModelNew around DSL
kernels) judged the same way: its forward on the GPU (glue over device tensors, kernels
built and launched by the runtime, the forward timed as a CUDA graph), against the Model's
outputs, next to eager PyTorch and torch.compile measured on the same GPU.

    python scripts/device_kernel_task_gpu.py --out DIR [--only kernel|kernelbench]

Writes DIR/kernel-task-gpu-<date>.json: per task the GPU outcome (status, time, signals,
feedback, the baselines for KernelBench) and the CPU outcome's estimate (--cpu-too)."""
from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

KERNELBENCH = ["relu", "softmax", "layernorm", "gemm_relu"]
TASKS = [("examples/copy.py", "copy", {"M": 4096, "N": 4096}),
         ("examples/gemm.py", "gemm", {"M": 1024, "N": 1024, "K": 1024}),
         ("examples/flash_attention.py", "flash_fwd", {"T": 1024})]


def main() -> int:
    from argus.agent.tasks.file_task import file_task

    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="out/device")
    parser.add_argument("--cpu-too", action="store_true", help="also the interpreter's run")
    parser.add_argument("--only", choices=("kernel", "kernelbench"), default=None)
    args = parser.parse_args()
    rows = []
    for path, kernel, shape in TASKS if args.only != "kernelbench" else []:
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
    for name in KERNELBENCH if args.only != "kernel" else []:
        rows.append(kernelbench_row(name, args.cpu_too))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    (out / f"kernel-task-gpu-{stamp}.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if all(r["gpu"]["status"] == "ok" for r in rows) else 1


def kernelbench_row(name: str, cpu_too: bool) -> dict:
    from argus.agent.tasks.kernelbench import kernelbench_task

    problem = REPO / "tests" / "fixtures" / "kernelbench" / f"{name}.py"
    answer = problem.parent / "answers" / f"{name}_new.py"
    print(f"== kernelbench {name}", flush=True)
    try:
        task = kernelbench_task(problem, sets=2)
    except Exception as err:
        row = {"task": f"kernelbench {name}", "gpu": {"status": "error",
                                                      "feedback": f"{type(err).__name__}: {err}"}}
        print(json.dumps(row["gpu"]), flush=True)
        return row
    task.device = "cuda"
    gpu = task.evaluate(answer)
    row = {"task": f"kernelbench {name}", "baselines": task.baselines, "gpu": {
        "status": gpu.status, "time_ms": gpu.time_ms, "source": gpu.source,
        "feedback": gpu.feedback, "timing": gpu.details.get("gpu")}}
    eager = (task.baselines.get("eager PyTorch") or {}).get("time_ms")
    if gpu.time_ms and eager:
        row["ratio_vs_eager"] = eager / gpu.time_ms
    print(json.dumps(row, indent=1, default=str), flush=True)
    if cpu_too:
        task.device = "cpu"
        cpu = task.evaluate(answer)
        row["cpu"] = {"status": cpu.status, "time_ms": cpu.time_ms, "source": cpu.source}
    return row


if __name__ == "__main__":
    sys.exit(main())
