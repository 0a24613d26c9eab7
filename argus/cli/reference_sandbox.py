"""Run one step of a kernel file's reference in an isolated child process.

The child (argus/cli/reference_child.py) gets a fresh job folder as its working directory,
the kept source of the file (argus/cli/reference_source.py: imports, plain functions,
constants; nothing else of the file), the input arrays, a bare environment, limits on CPU
time, memory and file size, and a wall-clock timeout. It never sees the parent's memory:
what comes back is arrays and one JSON line, read by the parent. A step is `inputs`
(the file's `inputs(rng, symbols)`) or `reference` (the reference on the inputs).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from argus.cli.errors import UsageError
from argus.input_limits import REFERENCE_MEMORY_BYTES, REFERENCE_SECONDS

CHILD = Path(__file__).with_name("reference_child.py")


def run_step(reference, step: str, arrays: dict[str, np.ndarray], **job) -> tuple[dict, dict]:
    """(the child's JSON reply, the arrays it returned); a failure of the user's code is a
    UsageError naming the file:line of the reference's traceback."""
    with tempfile.TemporaryDirectory(prefix="argus-reference-") as job_dir:
        spec = {"step": step, "filename": str(reference.path), "source": reference.source,
                "constants": {k: v for k, v in job.pop("constants", {}).items()
                              if isinstance(v, (int, float, str, bool))}, **job}
        Path(job_dir, "job.json").write_text(json.dumps(spec), encoding="utf-8")
        np.savez(Path(job_dir, "inputs.npz"), **arrays)
        try:
            proc = subprocess.run(
                [sys.executable, "-I", str(CHILD), job_dir], cwd=job_dir, env=_bare_env(job_dir),
                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                timeout=REFERENCE_SECONDS, preexec_fn=_limits)
        except subprocess.TimeoutExpired:
            raise UsageError(f"{reference.path}:{reference.line}: {_what(reference, step)} did "
                             f"not finish within {REFERENCE_SECONDS} s; use smaller shapes"
                             ) from None
        reply = _reply(proc.stdout)
        if reply is None:
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
            raise UsageError(f"{reference.path}:{reference.line}: {_what(reference, step)} "
                             f"ended without a result (exit status {proc.returncode}: {tail})")
        if not reply.get("ok"):
            line = reply.get("line") or reference.line
            raise UsageError(f"{reference.path}:{line}: {_what(reference, step)} failed: "
                             f"{reply.get('error')}")
        with np.load(Path(job_dir, "result.npz")) as data:
            return reply, {k: data[k] for k in data.files}


def _what(reference, step: str) -> str:
    return "inputs(rng, symbols)" if step == "inputs" else f"{reference.name}(...)"


def _reply(stdout: str) -> dict | None:
    """The child's JSON line: the last line of its stdout (the user's prints come before)."""
    lines = stdout.rstrip("\n").splitlines()
    try:
        reply = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        return None
    return reply if isinstance(reply, dict) else None


def _bare_env(job_dir: str) -> dict[str, str]:
    """No variable of the parent's (tokens, keys, paths): only what numpy needs to run
    single-threaded."""
    return {"PATH": "/usr/bin:/bin", "HOME": job_dir, "TMPDIR": job_dir, "LANG": "C.UTF-8",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _limits() -> None:
    """In the child before it starts: CPU seconds, address space, no core file."""
    import resource

    for limit, value in ((resource.RLIMIT_CPU, REFERENCE_SECONDS),
                         (resource.RLIMIT_AS, REFERENCE_MEMORY_BYTES),
                         (resource.RLIMIT_CORE, 0)):
        try:
            soft, hard = resource.getrlimit(limit)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (cap, hard))
        except (ValueError, OSError):
            pass
