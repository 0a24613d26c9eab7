"""Two GPU paths the CPU tests can only stub, run for real on a GPU machine:

    python -m argus.agent.gpu_selfcheck coder   [--shape 2048x2048x2048] [--kernel FILE]
    python -m argus.agent.gpu_selfcheck profile [--shape 2048x2048x2048]

coder: one planner episode whose provider answers with a model-written DSL kernel (by
default examples/gemm.py, which is not a library specialisation, so it goes the new-kernel
way): step 0 measures the start configuration in the GPU worker child, step 1 is the coder
step (written to a file, `argus check` in a child, built in a child, then
GpuEvaluator.evaluate_kernel: parsed, generated, built and measured by the harness in its
own child). Prints one JSON object per step and exits 0 when the kernel step is measured ok.

profile: the `profile` tool on one GEMM configuration (the shape table's choice): with ncu
(`--clock-control none`) when ncu is found, then the timing breakdown without ncu. Prints
both results as JSON; exits 0 when the ncu run parsed metrics (or ncu is absent and the
timing breakdown worked).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from argus.agent.providers.base import Completion

REPO = Path(__file__).resolve().parents[2]


class KernelReply:
    """A provider with one answer: the kernel file as a coder-step reply; then stop."""
    name, model = "selfcheck", "kernel-reply"

    def __init__(self, source: str):
        self.replies = [json.dumps({"technique": "selfcheck-kernel", "invariants": [],
                                    "rationale": "a model-written kernel on the GPU path"})
                        + "\n```python\n" + source + "```\n"]

    def complete(self, request):
        text = self.replies.pop(0) if self.replies else '{"stop": true}'
        return Completion(text=text, provider=self.name, model=self.model)


def coder(shape: str, kernel: str) -> int:
    from argus.agent.evaluators import EvaluatorUnavailable, GpuEvaluator
    from argus.agent.planner import Budget, IcrlPlanner
    from argus.agent.task import parse_gemm_shape

    task = parse_gemm_shape(shape)
    evaluator = GpuEvaluator()
    try:
        evaluator.ensure_ready()
    except EvaluatorUnavailable as err:
        print(f"gpu_selfcheck coder: {err}", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="argus-selfcheck-")
    source = Path(kernel).read_text(encoding="utf-8")
    try:
        result = IcrlPlanner(KernelReply(source), evaluator, task, work_dir=work,
                             budget=Budget(evaluations=2, seconds=300)).run()
    finally:
        evaluator.close()
    for step in result.trajectory.steps:
        print(json.dumps({"step": step.index, "technique": step.technique,
                          "kernel": step.kernel, "status": step.outcome.status,
                          "tflops": step.outcome.tflops, "feedback": step.outcome.feedback[:1500],
                          "benchmark": {k: v for k, v in (step.outcome.details.get("benchmark")
                                                          or {}).items()
                                        if k in ("status", "time_ms", "peer_time_ms",
                                                 "reasons")}}))
    print(json.dumps({"stop_reason": result.stop_reason}))
    kernel_steps = [s for s in result.trajectory.steps if s.kernel]
    return 0 if kernel_steps and kernel_steps[-1].outcome.ok else 1


def profile(shape: str) -> int:
    from argus.agent.library_space import LibrarySpace
    from argus.agent.profile import profile as run_profile
    from argus.agent.task import parse_gemm_shape

    task = parse_gemm_shape(shape)
    knobs = LibrarySpace().table_config(task).to_json()
    with_ncu = run_profile(shape, knobs)
    print(json.dumps({"which": "ncu" if with_ncu.get("kind") == "ncu" else "default",
                      **with_ncu}, default=str))
    timing = run_profile(shape, knobs, ncu=None)
    print(json.dumps({"which": "timing", **timing}, default=str))
    if with_ncu.get("kind") == "ncu":
        return 0 if with_ncu.get("ok") else 1
    return 0 if timing.get("ok") else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m argus.agent.gpu_selfcheck",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("coder", "profile"))
    parser.add_argument("--shape", default="2048x2048x2048")
    parser.add_argument("--kernel", default=str(REPO / "examples" / "gemm.py"))
    args = parser.parse_args(argv)
    return coder(args.shape, args.kernel) if args.what == "coder" else profile(args.shape)


if __name__ == "__main__":
    sys.exit(main())
