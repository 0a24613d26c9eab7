"""Running candidate_child.py in its own process: a job folder in, arrays and one JSON line out.

An interpreter child gets a bare environment and a 16 GiB address-space limit. A GPU child
(`job["device"] == "cuda"`) keeps what CUDA and the build need (PATH, the CUDA and library
paths, the visible devices, the kernel cache) and no address-space limit: a CUDA context
reserves far more virtual memory than it uses. `profile_child` runs a GPU child under
Nsight Compute and returns its metrics."""
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
    gpu = job.get("device") == "cuda"
    where = "on the GPU" if gpu else "on the interpreter"
    with tempfile.TemporaryDirectory(prefix="argus-candidate-") as job_dir:
        _write_job(job_dir, job, arrays, state)
        try:
            proc = subprocess.run(CHILD + [job_dir], cwd=job_dir, env=_environment(job_dir, gpu),
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  timeout=timeout_s, preexec_fn=_session if gpu else _limits)
        except subprocess.TimeoutExpired:
            return {"ok": False, "kind": "timeout",
                    "error": f"the candidate did not finish {where} within "
                             f"{timeout_s:g} s (a hang, or far too much work)"}, {}
        lines = proc.stdout.rstrip("\n").splitlines()
        try:
            reply = json.loads(lines[-1]) if lines else None
        except json.JSONDecodeError:
            reply = None
        if not isinstance(reply, dict):
            tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
            return {"ok": False, "kind": "crash", "error": f"the candidate's child ({where}) "
                                                           f"ended without a result (exit "
                                                           f"status {proc.returncode}: "
                                                           f"{tail})"}, {}
        out = {}
        if reply.get("ok") and Path(job_dir, "result.npz").exists():
            with np.load(Path(job_dir, "result.npz")) as data:
                out = {k: data[k] for k in data.files}
        return reply, out


CHILD = [sys.executable, "-m", "argus.agent.tasks.candidate_child"]
# what a GPU child keeps of this process's environment (CUDA, the toolchain, the cache)
GPU_ENV = ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES",
           "ARGUS_CACHE_DIR", "XDG_CACHE_HOME", "NVIDIA_VISIBLE_DEVICES")


def _write_job(job_dir: str, job: dict, arrays: dict, state: dict | None) -> None:
    Path(job_dir, "job.json").write_text(json.dumps(job), encoding="utf-8")
    np.savez(Path(job_dir, "inputs.npz"), **arrays)
    if state:
        np.savez(Path(job_dir, "state.npz"), **state)


def _environment(job_dir: str, gpu: bool) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": job_dir, "TMPDIR": job_dir,
           "LANG": "C.UTF-8", "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if gpu:
        env.update({k: os.environ[k] for k in GPU_ENV if k in os.environ})
        if os.environ.get("PYTHONPATH"):      # packages installed beside the repo (a wheel dir)
            env["PYTHONPATH"] = os.pathsep.join([str(REPO), os.environ["PYTHONPATH"]])
        if "ARGUS_CACHE_DIR" not in env:       # built kernels outlive the job folder
            env["ARGUS_CACHE_DIR"] = str(Path.home() / ".cache" / "argus")
    return env


def profile_child(job: dict, arrays: dict[str, np.ndarray], ncu: str, metrics: list[str],
                  kernel: str, timeout_s: float = CANDIDATE_SECONDS, runner=None) -> dict:
    """Nsight Compute over a GPU child that launches the candidate twice on the first set
    (the second launch measured): {"ok": True, "metrics": {metric: {value, unit}}} of the
    candidate's kernel, or {"ok": False, "error": ...}. `runner(cmd, env, timeout_s) ->
    (exit status, stdout, stderr)` replaces the process call (tests)."""
    from argus.agent.profile import parse_ncu_csv

    job = {**job, "device": "cuda", "profile": True}
    with tempfile.TemporaryDirectory(prefix="argus-profile-") as job_dir:
        _write_job(job_dir, job, arrays, None)
        cmd = [ncu, "--csv", "--metrics", ",".join(metrics), "--clock-control", "none",
               "--kernel-name", f"regex:^{kernel}$", "--launch-skip", "1", "--launch-count",
               "1", *CHILD, job_dir]
        code, out, err = (runner or _run_profile)(cmd, _environment(job_dir, True), timeout_s)
    if code != 0:
        return {"ok": False, "error": f"ncu exited {code}: "
                                      f"{(err.strip() or out.strip())[-1500:]}"}
    try:
        table = parse_ncu_csv(out)
    except ValueError as why:
        return {"ok": False, "error": str(why)}
    if not table:
        return {"ok": False, "error": f"ncu measured no launch of {kernel}"}
    return {"ok": True, "metrics": next(iter(table.values()))}


def _run_profile(cmd: list[str], env: dict, timeout_s: float) -> tuple[int, str, str]:
    try:
        proc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=timeout_s, preexec_fn=_session)
    except subprocess.TimeoutExpired:
        return 124, "", f"ncu did not finish within {timeout_s:g} s"
    return proc.returncode, proc.stdout, proc.stderr


def _session() -> None:
    os.setsid() if hasattr(os, "setsid") else None


def _limits() -> None:
    os.setsid() if hasattr(os, "setsid") else None
    cap_limits(CANDIDATE_MEMORY_BYTES)


def cap_limits(address_space: int | None) -> None:
    """In a child before it runs: no core dumps, and its address space capped at
    `address_space` bytes (None: left alone, for a CUDA context), never above the hard
    limit."""
    import resource

    caps = [(resource.RLIMIT_CORE, 0)]
    if address_space is not None:
        caps.append((resource.RLIMIT_AS, address_space))
    for limit, value in caps:
        try:
            soft, hard = resource.getrlimit(limit)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (cap, hard))
        except (ValueError, OSError):
            pass
