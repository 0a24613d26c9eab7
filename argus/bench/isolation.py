"""Runs an evaluation in a child process under a watchdog.

A hang or a crash of the candidate becomes a result ("timeout", "crashed" with exit code
or signal and the tail of stderr), never a stuck run. The child is started in its own
session and, on timeout, its whole process group is killed by id. The watchdog starts
when the child reports "ready" (torch imported), so a slow import is not charged to the
candidate; startup has its own, longer limit.
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

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _tail(path: str, limit: int = 4000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def run_isolated(job: dict, *, timeout_s: float = 300.0, startup_timeout_s: float = 120.0,
                 python: str | None = None) -> dict:
    """Evaluates `job` (see worker.py) in a child; returns its result dict, or a
    "timeout"/"crashed"/"error" result made here. `timeout_s` bounds the run after the
    child is ready."""
    if timeout_s <= 0 or startup_timeout_s <= 0:
        raise ValueError("timeouts must be positive seconds")
    read_fd, write_fd = os.pipe()
    logs = tempfile.mkdtemp(prefix="argus-bench-")
    out_path, err_path = os.path.join(logs, "stdout"), os.path.join(logs, "stderr")
    env = dict(os.environ)
    env["PYTHONPATH"] = _REPO_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    with open(out_path, "wb") as out_f, open(err_path, "wb") as err_f:
        proc = subprocess.Popen([python or sys.executable, "-m", "argus.bench.worker", str(write_fd)],
                                stdin=subprocess.PIPE, stdout=out_f, stderr=err_f,
                                pass_fds=(write_fd,), start_new_session=True, env=env)
    os.close(write_fd)
    started = time.monotonic()
    try:
        proc.stdin.write(json.dumps(job).encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    deadline, phase, buffer, result = started + startup_timeout_s, "starting", b"", None
    ready_at = None
    with os.fdopen(read_fd, "rb", buffering=0) as pipe:
        while result is None:
            left = deadline - time.monotonic()
            if left <= 0:
                _kill_group(proc)
                return {"status": "timeout", "phase": phase,
                        "reasons": [f"no result within {timeout_s if phase == 'ready' else startup_timeout_s:g} s "
                                    f"({'running' if phase == 'ready' else 'starting'}); the child was killed"],
                        "stderr_tail": _tail(err_path), "wall_s": time.monotonic() - started,
                        "since_ready_s": None if ready_at is None else time.monotonic() - ready_at}
            ready, _, _ = select.select([pipe], [], [], min(left, 0.5))
            if not ready:
                continue
            chunk = pipe.read(65536)
            if not chunk:
                break  # child closed the pipe: exited or crashed
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                try:
                    message = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if message.get("phase") == "ready" and phase == "starting":
                    phase, ready_at = "ready", time.monotonic()
                    deadline = ready_at + timeout_s
                elif message.get("phase") == "result":
                    result = message.get("result")
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        code = proc.wait()
    if result is None:
        return {"status": "crashed", "phase": phase, "exit_code": code,
                "reasons": [f"the child {_describe_exit(code)} before reporting a result"],
                "stderr_tail": _tail(err_path), "wall_s": time.monotonic() - started}
    result.setdefault("stderr_tail", _tail(err_path, 2000))
    result["wall_s"] = time.monotonic() - started
    return result


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the child's process group (the child leads it: start_new_session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
