"""Running candidate_child.py in its own process: a job folder in, arrays and one JSON line out."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]
CANDIDATE_SECONDS = 600
CANDIDATE_MEMORY_BYTES = 16 << 30


def run_child(job: dict, arrays: dict[str, np.ndarray], state: dict | None = None,
              timeout_s: float = CANDIDATE_SECONDS) -> tuple[dict, dict[str, np.ndarray]]:
    """(the child's reply, its result arrays). A child that dies, hangs or prints no reply
    gives {"ok": False, "kind": ..., "error": ...}, never an exception."""
    with tempfile.TemporaryDirectory(prefix="argus-candidate-") as job_dir:
        Path(job_dir, "job.json").write_text(json.dumps(job), encoding="utf-8")
        np.savez(Path(job_dir, "inputs.npz"), **arrays)
        if state:
            np.savez(Path(job_dir, "state.npz"), **state)
        env = {"PATH": "/usr/bin:/bin", "HOME": job_dir, "TMPDIR": job_dir,
               "LANG": "C.UTF-8", "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1",
               "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        try:
            proc = subprocess.run([sys.executable, "-m", "argus.agent.tasks.candidate_child",
                                   job_dir], cwd=job_dir, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=timeout_s,
                                  preexec_fn=_limits)
        except subprocess.TimeoutExpired:
            return {"ok": False, "kind": "timeout",
                    "error": f"the candidate did not finish on the interpreter within "
                             f"{timeout_s:g} s (a hang, or far too much work)"}, {}
        lines = proc.stdout.rstrip("\n").splitlines()
        try:
            reply = json.loads(lines[-1]) if lines else None
        except json.JSONDecodeError:
            reply = None
        if not isinstance(reply, dict):
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
            return {"ok": False, "kind": "crash", "error": f"the interpreter child ended "
                                                           f"without a result (exit status "
                                                           f"{proc.returncode}: {tail})"}, {}
        out = {}
        if reply.get("ok") and Path(job_dir, "result.npz").exists():
            with np.load(Path(job_dir, "result.npz")) as data:
                out = {k: data[k] for k in data.files}
        return reply, out


def _limits() -> None:
    import resource

    os.setsid() if hasattr(os, "setsid") else None
    for limit, value in ((resource.RLIMIT_AS, CANDIDATE_MEMORY_BYTES),
                         (resource.RLIMIT_CORE, 0)):
        try:
            soft, hard = resource.getrlimit(limit)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (cap, hard))
        except (ValueError, OSError):
            pass
