"""The planner's side of gpu_worker: one child measuring many configurations, watched.

`WorkerSession.evaluate(job, timeout_s)` sends one job to the child and waits for its
result under a watchdog: a job that overruns is killed with the child's whole process
group (the child leads its own session) and comes back as "timeout"; a child that dies
comes back as "crashed" with its exit and the tail of its stderr. After any result that is
not "ok" the child is ended and the next job starts a fresh one (a failed kernel may have
left the CUDA context unusable). Startup (python, torch, CUDA context) has its own limit and
is recorded per start in `starts`, so reports can say what process starts cost.

`SessionBenchmark` is the GPU evaluator's benchmark callable on top of it: the library GEMM
at one configuration through the harness, in the child.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

from argus.agent.evaluators.jobs import SEARCH_DISTRIBUTIONS, from_harness, harness_job, search_job

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _tail(path: str, limit: int = 3000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - limit))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


class WorkerSession:
    def __init__(self, device: str = "cuda", startup_timeout_s: float = 120.0,
                 python: str | None = None, module: str = "argus.agent.evaluators.gpu_worker"):
        if startup_timeout_s <= 0:
            raise ValueError("startup_timeout_s must be positive seconds")
        self.device, self.startup_timeout_s = device, startup_timeout_s
        self.python, self.module = python or sys.executable, module
        self.proc: subprocess.Popen | None = None
        self._fd: int | None = None
        self._buffer = b""
        self._err_path = ""
        self._jobs = 0
        self.starts: list[dict[str, Any]] = []     # one per child: seconds to ready, why
        self.environment: dict[str, Any] = {}     # the last child's (torch, GPU, clocks)

    # -- the child ---------------------------------------------------------------------
    def _spawn(self) -> None:
        read_fd, write_fd = os.pipe()
        logs = tempfile.mkdtemp(prefix="argus-gpu-worker-")
        self._err_path = os.path.join(logs, "stderr")
        env = dict(os.environ)
        env["PYTHONPATH"] = _REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
        with open(self._err_path, "wb") as err:
            self.proc = subprocess.Popen([self.python, "-m", self.module, str(write_fd),
                                          self.device], stdin=subprocess.PIPE, stdout=err,
                                         stderr=err, pass_fds=(write_fd,),
                                         start_new_session=True, env=env)
        os.close(write_fd)
        self._fd, self._buffer = read_fd, b""

    def _read_until(self, wanted: str, deadline: float, job_id=None) -> dict | None:
        """The next message of phase `wanted` (for `job_id`), or None at EOF; raises
        TimeoutError at the deadline."""
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if message.get("phase") == wanted and (job_id is None
                                                       or message.get("id") == job_id):
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self._fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(self._fd, 65536)
                if not chunk:
                    return None
                self._buffer += chunk

    def _start(self, why: str, limit_s: float) -> dict | None:
        """Start a child and wait for "ready"; None when it is ready, else the failure."""
        began = time.monotonic()
        self._spawn()
        limit = min(self.startup_timeout_s, limit_s)
        try:
            ready = self._read_until("ready", began + limit)
        except TimeoutError:
            self.close()
            self.starts.append({"seconds": time.monotonic() - began, "why": why, "ok": False})
            return {"status": "timeout", "phase": "starting",
                    "reasons": [f"the GPU worker was not ready within {limit:g} s; it was "
                                f"killed"], "stderr_tail": _tail(self._err_path)}
        if ready is None:
            failure = self._crashed("starting")
            self.starts.append({"seconds": time.monotonic() - began, "why": why, "ok": False})
            return failure
        self.environment = ready.get("environment", {})
        self.starts.append({"seconds": time.monotonic() - began, "why": why, "ok": True,
                            "import_seconds": ready.get("seconds")})
        return None

    def _crashed(self, phase: str) -> dict:
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:   # closed its pipe but lives on: end it
                self.close()
        self._forget()
        if code is None:
            how = "closed its pipe"
        elif code < 0:
            try:
                how = f"was killed by signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"was killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        return {"status": "crashed", "phase": phase, "exit_code": code,
                "reasons": [f"the GPU worker {how} before reporting a result"],
                "stderr_tail": _tail(self._err_path)}

    def _forget(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self.proc, self._fd, self._buffer = None, None, b""

    def close(self) -> None:
        """End the child: EOF on its stdin, then SIGKILL to its group if it lingers."""
        proc = self.proc
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        self._forget()

    # -- one job -------------------------------------------------------------------------
    def evaluate(self, job: dict, timeout_s: float) -> dict:
        """The harness result of `job` (see gpu_worker), with "wall_s" (send to result)."""
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive seconds")
        sent = time.monotonic()
        if self.proc is None:
            failure = self._start("first job" if not self.starts else "after a failed job",
                                  max(timeout_s, 1.0) + self.startup_timeout_s)
            if failure is not None:
                failure["wall_s"] = time.monotonic() - sent
                return failure
        self._jobs += 1
        job = {**job, "id": self._jobs}
        began = time.monotonic()
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.flush()
            message = self._read_until("result", began + timeout_s, self._jobs)
        except TimeoutError:
            tail = _tail(self._err_path)
            self.close()
            return {"status": "timeout", "phase": "running",
                    "reasons": [f"no result within {timeout_s:g} s; the GPU worker was killed"],
                    "stderr_tail": tail, "wall_s": time.monotonic() - sent}
        except BrokenPipeError:
            message = None
        if message is None:
            failure = self._crashed("running")
            failure["wall_s"] = time.monotonic() - sent
            return failure
        result = message.get("result") or {"status": "error", "reasons": ["empty result"]}
        result["wall_s"] = time.monotonic() - sent
        if result.get("status") != "ok":
            result.setdefault("stderr_tail", _tail(self._err_path, 2000))
            self.close()
        return result


class SessionBenchmark:
    """benchmark(config, task) -> the GPU evaluator's result dict, measured in the session's
    child. `mode`: "full" (the harness's evaluate, `reps` timed calls) or "search" (one check
    on inputs drawn on the device, a short timing, the re-check: search_mode.py); a call may
    name another. `timeout_s` bounds one configuration (build, checks, timing) after the
    child is ready; a call may raise it (the full harness on a large shape needs more) and
    `limit` (a callable giving seconds, e.g. a deadline's) can lower it. Search jobs get a
    fresh seed each (from the OS: no candidate can know it in advance) and alternate the
    two input distributions; the result says which."""

    def __init__(self, timeout_s: float = 120.0, reps: int = 50, device: str = "cuda",
                 session: WorkerSession | None = None, limit=None, mode: str = "full"):
        from argus.agent.evaluators.gpu_worker import MODES

        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.timeout_s, self.reps, self.limit, self.mode = timeout_s, reps, limit, mode
        self.session = session or WorkerSession(device)
        self.device = device
        self.search_jobs = 0

    def job(self, config, task, reps: int | None = None, mode: str | None = None) -> dict:
        import secrets

        if (mode or self.mode) == "search":
            job = search_job(task, secrets.randbits(62),
                             SEARCH_DISTRIBUTIONS[self.search_jobs % len(SEARCH_DISTRIBUTIONS)])
            self.search_jobs += 1
        else:
            job = harness_job(task, reps or self.reps)
        job.update(device=self.device, config=config.to_json())
        if not self.device.startswith("cuda"):
            job["timing"] = None
        return job

    def __call__(self, config, task, reps: int | None = None, mode: str | None = None,
                 timeout_s: float | None = None) -> dict[str, Any]:
        timeout = timeout_s or self.timeout_s
        if self.limit is not None:
            timeout = max(1.0, min(timeout, self.limit()))
        job = self.job(config, task, reps, mode)
        raw = self.session.evaluate(job, timeout)
        out = from_harness(raw)
        out.update(mode=job.get("mode", "full"), wall_s=raw.get("wall_s"),
                   job_seconds=raw.get("job_seconds"))
        if job.get("mode") == "search":
            out.update(seed=job["seed"], distribution=job["distribution"])
        return out

    def close(self) -> None:
        self.session.close()
