"""The child that measures library GEMM configurations, many per process:
`python -m argus.agent.evaluators.gpu_worker FD DEVICE`.

One torch import and one CUDA context serve every configuration of a run, instead of one
child per configuration (argus.bench.worker); the candidate stays out of the planner's
process and is still measured by the harness (argus.bench.evaluate: poisoned outputs,
fp64 oracle, CUDA-event timing against torch.matmul, the re-check after timing). As in the
harness's worker, the timing clock and L2 flusher are made, and the tamper snapshot taken,
before any candidate is imported; here the snapshot is compared after every job, so a
patch made by any earlier job is still reported. The snapshot also covers this worker's own
measuring modules (search_mode.py, device_inputs.py, this file), imported before it.

A job's "mode" picks the procedure: "full" (default) is the harness's `evaluate` (the
job's checks, 2 same-buffer checks, timing, the re-check); "search" is
`search_mode.search_evaluate` (one check, a short timing, the re-check) on the job's seed
and distribution. Problem factories the worker knows are bound before the snapshot.

Protocol: jobs arrive as JSON lines on stdin (the harness's job dict plus "id" and
"config", the GemmConfig knobs, which gpu_candidate reads from ARGUS_AGENT_GEMM_CONFIG).
On FD it writes JSON lines: {"phase": "ready", "environment": ...} once, then per job
{"phase": "started", "id"} and {"phase": "result", "id", "result"}. EOF on stdin ends it.
After a tampered job it reports and exits (the parent starts a fresh child).
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback

from argus.agent.evaluators.gpu_candidate import CONFIG_ENV

MODES = ("full", "search")
KNOWN_FACTORIES = ("argus.bench.problems:matmul", "argus.agent.evaluators.device_inputs:matmul")
_OWN_MODULES = ("argus.agent.evaluators.search_mode", "argus.agent.evaluators.device_inputs",
                "argus.agent.evaluators.gpu_worker", "argus.agent.evaluators.gpu_candidate")


def own_snapshot() -> dict:
    """'module.attribute' -> the object bound there, for this worker's measuring modules and
    the classes they define (the harness's tamper.snapshot covers argus.bench and torch)."""
    import inspect

    snap = {}
    for name in dict.fromkeys(_OWN_MODULES + (__name__,)):    # "__main__" when run as one
        module = sys.modules.get(name)
        if module is None:
            continue
        owners = [(name, module)] + [(f"{name}.{v.__qualname__}", v) for v in vars(module).values()
                                     if inspect.isclass(v) and v.__module__ == name]
        for label, owner in owners:
            for attr in (dir(owner) if inspect.isclass(owner) else list(vars(owner))):
                try:
                    snap[f"{label}.{attr}"] = inspect.getattr_static(owner, attr)
                except AttributeError:
                    continue
    return snap


def _send(fd: int, message: dict) -> None:
    os.write(fd, (json.dumps(message, default=str) + "\n").encode())


def environment(device: str) -> dict:
    import torch

    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "device": device,
           "pid": os.getpid()}
    if device.startswith("cuda"):
        from argus.bench.clocks import read_clocks

        env["device_name"] = torch.cuda.get_device_name(torch.device(device))
        env["capability"] = list(torch.cuda.get_device_capability(torch.device(device)))
        env["clocks"] = read_clocks()
    return env


def serve(fd: int, device: str, lines) -> int:
    started = time.monotonic()
    import torch  # noqa: F401  (imported before any candidate, like the harness)

    from argus.bench import tamper
    from argus.bench.evaluate import evaluate
    from argus.bench.loading import load_callable
    from argus.bench.oracle import Tolerance
    from argus.bench.timing import EventClock, L2Flusher, TimingConfig

    from argus.agent.evaluators.search_mode import search_evaluate

    factories = {ref: load_callable(ref) for ref in KNOWN_FACTORIES}
    clock = flusher = None
    if device.startswith("cuda"):
        clock, flusher = EventClock(device), L2Flusher(device)
    env = environment(device)
    before = tamper.snapshot()
    take_own = own_snapshot          # bound here: a later rebinding of the global cannot hide
    own_before = take_own()
    settings_before = tamper.numeric_settings()
    threads_before = tamper.python_threads()
    _send(fd, {"phase": "ready", "seconds": time.monotonic() - started, "environment": env})
    for line in lines:
        if not line.strip():
            continue
        job = json.loads(line)
        _send(fd, {"phase": "started", "id": job.get("id")})
        os.environ[CONFIG_ENV] = json.dumps(job["config"])
        t0 = time.monotonic()
        try:
            mode = job.get("mode", "full")
            if mode not in MODES:
                raise ValueError(f"unknown evaluation mode {mode!r}; use one of {MODES}")
            spec = job["problem"]
            factory = factories.get(spec["factory"]) or load_callable(spec["factory"])
            problem = factory(**spec.get("args", {}))
            candidate = load_callable(job["candidate"])
            timing = TimingConfig(**job["timing"]) if job.get("timing") is not None else None
            common = dict(device=device, seed=int(job.get("seed", 0)), timing=timing,
                          tol=Tolerance(**job.get("tolerance", {})),
                          clock=clock if timing is not None else None, flusher=flusher)
            if mode == "search":
                result = search_evaluate(problem, candidate, None,
                                         distribution=job.get("distribution", "normal"), **common)
            else:
                result = evaluate(problem, candidate, None, checks=int(job.get("checks", 4)),
                                  **common)
        except Exception as exc:
            result = {"status": "error", "reasons": [f"{type(exc).__name__}: {exc}"],
                      "traceback": traceback.format_exc()[-4000:]}
        tampered = (tamper.changes(before, tamper.snapshot())
                    + tamper.changes(own_before, take_own())
                    + tamper.setting_changes(settings_before, tamper.numeric_settings()))
        if tamper.python_threads() > threads_before:
            tampered.append(f"{tamper.python_threads() - threads_before} Python thread(s) "
                            f"left running")
        if tampered:
            result["status"] = "tampered"
            result["reasons"] = tampered + list(result.get("reasons", []))
        result["job_seconds"] = time.monotonic() - t0
        _send(fd, {"phase": "result", "id": job.get("id"), "result": result})
        if tampered:
            return 3
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    fd, device = int(argv[0]), (argv[1] if len(argv) > 1 else "cuda")
    return serve(fd, device, iter(sys.stdin.readline, ""))


if __name__ == "__main__":
    sys.exit(main())
