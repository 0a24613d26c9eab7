"""Independent verifier work in a forked child process, for a second core.

`argus check` runs the passes one after another; the protocol, resource, barrier and
vacuity passes need nothing of the tag pass, and within the tag pass the stores' coverage
needs nothing of their races. `start(fn)` forks: the child runs `fn()` and sends back its
result (pickled: findings are plain data), the parent goes on with its own share and
`Forked.result()` collects the child's. The child inherits everything built so far (the
parsed kernel, the walker's terms, the solver's memo) at no copying cost, and what it
learns is lost with it.

Failure is never silence: a child that raises, dies or sends nothing makes `result()`
raise `ChildFailed` with the reason, which the caller turns into a warning finding (the
kernel is then unverified, as for a pass that crashed in-process).

A deadline (deadline.py) holds in the child too: it re-arms the parent's; a child past it
answers so and `result()` raises `deadline.Expired`; a parent that stops waiting (its own
deadline, or any exception) kills the child, and `abandon_all()` kills and reaps any child
not collected.

Used only where `os.fork` exists and more than one CPU is ours (`jobs()`); elsewhere, and
with ARGUS_VERIFY_JOBS=1, the caller runs the same work serially. A forked child must not
touch z3 objects of threads: z3 runs no threads of its own in the solvers used here.
"""

from __future__ import annotations

import os
import pickle
import signal
import traceback

from . import deadline

_live: set[int] = set()     # children not yet collected


class ChildFailed(Exception):
    pass


def jobs() -> int:
    """How many processes verification may use: ARGUS_VERIFY_JOBS, else the CPUs this
    process may run on (at most 2: the work splits in two), 1 where fork is missing."""
    if not hasattr(os, "fork"):
        return 1
    env = os.environ.get("ARGUS_VERIFY_JOBS")
    if env is not None:
        try:
            return max(1, int(env))
        except ValueError:
            return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return min(cpus, 2)


class Forked:
    def __init__(self, pid: int, fd: int):
        self.pid, self.fd = pid, fd

    def result(self):
        chunks = []
        try:
            with os.fdopen(self.fd, "rb") as pipe:
                while True:
                    chunk = pipe.read(1 << 16)
                    if not chunk:
                        break
                    chunks.append(chunk)
        except BaseException:
            _kill(self.pid)          # not waited for (a deadline, an interrupt): no orphan
            raise
        _, status = os.waitpid(self.pid, 0)
        _live.discard(self.pid)
        data = b"".join(chunks)
        if not data:
            code = os.waitstatus_to_exitcode(status)
            raise ChildFailed(f"the child process ended with status {code} and no result")
        try:
            ok, value = pickle.loads(data)
        except Exception as err:  # noqa: BLE001 - a truncated or garbled answer
            raise ChildFailed(f"the child's answer could not be read ({err})") from None
        if ok == "expired":
            raise deadline.Expired(value)
        if not ok:
            raise ChildFailed(value)
        return value


def abandon_all() -> None:
    """Kill and reap every child not collected (the parent gave up on their answers)."""
    for pid in list(_live):
        _kill(pid)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    _live.discard(pid)


def start(fn) -> Forked:
    """Run fn() in a forked child; the parent gets a handle whose result() is fn's value."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # the child
        os.close(read)
        try:
            try:
                _live.clear()                      # the parent's children are not ours
                deadline.rearm_after_fork()
                payload = pickle.dumps((True, fn()))
            except deadline.Expired as err:
                payload = pickle.dumps(("expired", str(err)))
            except BaseException as err:  # noqa: BLE001 - reported to the parent
                last = traceback.extract_tb(err.__traceback__)[-1:]
                where = f" at {last[0].filename}:{last[0].lineno}" if last else ""
                payload = pickle.dumps((False, f"{type(err).__name__}: {err}{where}"))
            deadline.disarm()                      # the answer is written whole
            with os.fdopen(write, "wb") as pipe:
                pipe.write(payload)
        finally:
            os._exit(0)
    os.close(write)
    _live.add(pid)
    return Forked(pid, read)
