"""The child process of an isolated evaluation: `python -m argus.bench.worker FD`.

Reads the job (JSON) on stdin, reports on file descriptor FD as JSON lines: {"phase":
"ready"} once torch and the harness are imported (the watchdog's clock starts then), and
{"phase": "result", ...} at the end. The timing functions are captured and the tamper
snapshot taken before the candidate is imported.
"""
from __future__ import annotations

import json
import os
import sys
import traceback


def _send(fd: int, message: dict) -> None:
    os.write(fd, (json.dumps(message, default=str) + "\n").encode())


def run(job: dict, report) -> dict:
    import torch  # noqa: F401  (imported before the candidate, like the harness)

    from argus.bench import tamper
    from argus.bench.evaluate import evaluate
    from argus.bench.loading import load_callable
    from argus.bench.oracle import Tolerance
    from argus.bench.timing import EventClock, L2Flusher, TimingConfig

    device = job.get("device", "cpu")
    timing = TimingConfig(**job["timing"]) if job.get("timing") is not None else None
    clock = flusher = None
    if timing is not None and device.startswith("cuda"):
        clock, flusher = EventClock(device), L2Flusher(device)
    problem_spec = job["problem"]
    problem = load_callable(problem_spec["factory"])(**problem_spec.get("args", {}))
    before = tamper.snapshot()
    settings_before = tamper.numeric_settings()
    threads_before = tamper.python_threads()
    report({"phase": "ready"})

    candidate = load_callable(job["candidate"])
    tampered = [f"on import: {c}" for c in tamper.changes(before, tamper.snapshot())
                + tamper.setting_changes(settings_before, tamper.numeric_settings())]
    peer = load_callable(job["peer"]) if job.get("peer") else problem.peer
    if tampered:
        return {"status": "tampered", "reasons": tampered}
    result = evaluate(problem, candidate, peer, device=device, checks=int(job.get("checks", 4)),
                      seed=int(job.get("seed", 0)), timing=timing,
                      tol=Tolerance(**job.get("tolerance", {})), clock=clock, flusher=flusher)
    tampered = [f"during the run: {c}" for c in tamper.changes(before, tamper.snapshot())
                + tamper.setting_changes(settings_before, tamper.numeric_settings())]
    if tamper.python_threads() > threads_before:
        tampered.append(f"the candidate left {tamper.python_threads() - threads_before} "
                        "Python thread(s) running")
    if tampered:
        result["status"] = "tampered"
        result["reasons"] = tampered + list(result.get("reasons", []))
    return result


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    fd = int(argv[0])
    job = json.loads(sys.stdin.read())
    try:
        result = run(job, lambda m: _send(fd, m))
    except Exception as exc:
        result = {"status": "error", "reasons": [f"{type(exc).__name__}: {exc}"],
                  "traceback": traceback.format_exc()[-4000:]}
    _send(fd, {"phase": "result", "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
