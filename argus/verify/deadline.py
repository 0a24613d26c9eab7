"""A wall-clock bound on verifying one kernel: every input gets a verdict within it.

Each solver query has its own timeout (smt.TIMEOUT_MS), but a kernel can ask hundreds of
slow ones (the grouped MoE GEMM with 64 experts: 284 s, then "unverified"). `bound(s)`
ends the work after s seconds of wall clock wherever it is: a timer thread interrupts the
z3 query running at the deadline (z3's own `interrupt`, thread-safe), and SIGALRM raises
`Expired` in the main thread as soon as control is back in Python. `Expired` derives from
BaseException, so a pass's `except Exception` (a crashed rule turned into a warning) cannot
swallow it; the driver catches it and reports the kernel unverified, naming the bound.

A forked child (forked.py) re-arms the same deadline (interval timers and threads do not
survive fork); the parent kills a child it stops waiting for. Only the main thread can
take signals: elsewhere `bound` is a no-op and says so through `active()`.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from contextlib import contextmanager

DEFAULT_S = 60.0          # `argus check`'s bound unless --deadline / ARGUS_VERIFY_DEADLINE (the
                          # 128-expert grouped GEMMs verify in 19-24 s on a 2-core machine)
INTERRUPT_EVERY_S = 0.05  # after the deadline, z3 is interrupted until the walk stops

_end: float | None = None
_stop: threading.Event | None = None
_thread: threading.Thread | None = None
_fired = threading.Event()   # the interrupter has interrupted z3 (it must be reset)
_old_handler = None


class Expired(BaseException):
    """The verification ran past its deadline (see the module docstring)."""


def from_env(default: float | None = DEFAULT_S) -> float | None:
    """ARGUS_VERIFY_DEADLINE in seconds ("0" or "none": no bound), else `default`."""
    text = os.environ.get("ARGUS_VERIFY_DEADLINE")
    if text is None:
        return default
    return parse(text, "ARGUS_VERIFY_DEADLINE")


def parse(text: str, where: str) -> float | None:
    """Seconds from text: a positive number, or 0 / "none" for no bound; ValueError naming
    `where` otherwise."""
    if text.strip().lower() in ("0", "none", "off"):
        return None
    try:
        seconds = float(text)
    except ValueError:
        raise ValueError(f"{where}={text!r} is not a number of seconds (0 or none: no "
                         "bound)") from None
    if not seconds > 0 or seconds != seconds or seconds == float("inf"):
        raise ValueError(f"{where}={text!r}: give a positive number of seconds (0 or none: "
                         "no bound)")
    return seconds


def remaining() -> float | None:
    """Seconds left before the deadline (None when none is armed)."""
    return None if _end is None else max(0.0, _end - time.monotonic())


def active() -> bool:
    return _end is not None


@contextmanager
def bound(seconds: float | None):
    """Run the body under a deadline of `seconds` (None: no bound; an enclosing bound
    that ends sooner stays in force). No-op outside the main thread or without SIGALRM."""
    if seconds is None or not _can_arm():
        yield
        return
    end = time.monotonic() + seconds
    if _end is not None and _end <= end:
        yield                       # the enclosing bound ends first
        return
    outer = _end
    disarm()                        # one timer and one interrupter at a time
    arm(end)
    try:
        yield
    finally:
        disarm()
        if outer is not None:
            arm(outer)


def arm(end: float) -> None:
    """Arm the deadline at monotonic time `end` (the main thread only)."""
    global _end, _stop, _thread, _old_handler
    if not _can_arm():
        return
    _end = end
    _old_handler = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, max(end - time.monotonic(), 1e-3))
    _stop = threading.Event()
    _thread = threading.Thread(target=_interrupter, args=(end, _stop), daemon=True,
                               name="argus-verify-deadline")
    _thread.start()


def disarm() -> None:
    """Stop the timer and the interrupter; if it interrupted z3, reset z3's context: an
    interrupt that lands between queries stays pending, and z3.simplify then returns its
    input half simplified, silently, until some solver check clears it (a later kernel
    would be left unverified for nothing)."""
    global _end, _stop, _thread, _old_handler
    if _end is None:
        return
    signal.setitimer(signal.ITIMER_REAL, 0)
    if _old_handler is not None:
        signal.signal(signal.SIGALRM, _old_handler)
    if _stop is not None:
        _stop.set()
    if _thread is not None:
        _thread.join()
    _end, _stop, _thread, _old_handler = None, None, None, None
    if _fired.is_set():
        _fired.clear()
        _reset_z3()


def _reset_z3() -> None:
    import z3
    s = z3.SolverFor("QF_BV")
    s.add(z3.BitVec("argus#reset", 8) == 0)
    s.check()


def rearm_after_fork() -> None:
    """In a forked child: the parent's deadline again (fork drops the timer and the
    thread; the module's state says when it ends)."""
    global _end
    if _end is not None:
        end, _end = _end, None
        arm(end)


def _can_arm() -> bool:
    return hasattr(signal, "setitimer") and \
        threading.current_thread() is threading.main_thread()


def _expire(signum, frame):
    raise Expired("the verification ran past its deadline")


def _interrupter(end: float, stop: threading.Event) -> None:
    """At the deadline, cancel the running z3 query (and any started before the main
    thread sees SIGALRM), until disarm() stops it."""
    if stop.wait(max(0.0, end - time.monotonic())):
        return
    import z3
    while not stop.is_set():
        try:
            _fired.set()
            z3.main_ctx().interrupt()
        except Exception:  # noqa: BLE001 - best effort: SIGALRM still ends the walk
            return
        stop.wait(INTERRUPT_EVERY_S)
