"""Judging a kernel task's candidates, one by one or side by side on a backend.

A candidate is judged in two parts: the static part (the task's precheck of a ModelNew's
glue, then `argus check` and the build in a child: `check`), and the run (the task's
`evaluate`: the interpreter and the cost model on a CPU, the GPU where the task's device
is "cuda": `evaluate`). On a backend (parallel/: a local process pool or a Ray cluster)
the checks of a round's samples run as "verify" jobs side by side, and the runs of the
clean ones as "time" jobs, one GPU each, when the task runs on the GPU (else "verify"
jobs too: the interpreter is CPU work). Jobs travel by name (`check_job`, `evaluate_job`)
with the task and the candidate's source as their argument.
"""
from __future__ import annotations

from pathlib import Path

from argus.agent import coder
from argus.agent.evaluators.base import Outcome

CHECK_JOB = "argus.agent.coding.judge_jobs:check_job"
EVALUATE_JOB = "argus.agent.coding.judge_jobs:evaluate_job"


def check(task, source: str, work_dir: str, index: int, checker=None,
          compiler=None) -> tuple[str, Outcome | None, str]:
    """(kernel path, the outcome when the candidate is rejected before it runs or None,
    what was built)."""
    rejected = task.precheck(source)
    if rejected is not None:
        return str(coder.write_candidate(source, Path(work_dir), index, None)), rejected, ""
    checked = coder.check_candidate(source, Path(work_dir), index, checker, compiler,
                                    dtype=task.dtype, limit=None)
    if not checked.clean:
        return checked.path, checked.outcome, ""
    return checked.path, None, checked.built or ""


def evaluate(task, path: str, built: str) -> Outcome:
    outcome = task.evaluate(path)
    if built:
        outcome.feedback = f"built ({built}); {outcome.feedback}"
    return outcome


def check_job(arg: dict) -> tuple:
    return check(arg["task"], arg["source"], arg["work_dir"], arg["index"])


def evaluate_job(arg: dict) -> Outcome:
    return evaluate(arg["task"], arg["path"], arg["built"])


def judge_on(backend, task, sources: list[tuple[int, str]], work_dir: str) -> list[tuple]:
    """[(kernel path, outcome)] of each (index, source), in order: the checks side by side
    as "verify" jobs, then the runs of the clean candidates side by side ("time" jobs, one
    GPU each, for a task on the GPU)."""
    checks = [backend.submit("verify", CHECK_JOB, {"task": task, "source": source,
                                                   "work_dir": work_dir, "index": index})
              for index, source in sources]
    checked = [f.result() for f in checks]
    kind = "time" if getattr(task, "device", "cpu") == "cuda" else "verify"
    runs = {i: backend.submit(kind, EVALUATE_JOB, {"task": task, "path": path,
                                                   "built": built})
            for i, (path, rejected, built) in enumerate(checked) if rejected is None}
    return [(path, rejected if rejected is not None else runs[i].result())
            for i, (path, rejected, built) in enumerate(checked)]
