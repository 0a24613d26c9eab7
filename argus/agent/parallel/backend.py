"""What an evaluation backend offers, and the serial one.

A backend takes jobs of two kinds: "verify" (CPU: the verifier on a kernel) and "time"
(one GPU: a candidate measured through the harness). `submit(kind, ref, arg)` returns a
concurrent.futures.Future of the job's value; `map` runs several and returns their values
in order. Every finished job is tallied by worker and kind (`workers()`), which is what a
parallel run's report shows. At most one timing job runs on a GPU at a time, whatever the
backend (local: one single-process pool per GPU; Ray: num_gpus=1 per timing task).
"""
from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import Future
from typing import Any

from argus.agent.parallel.work import KINDS, run_job


class BackendError(RuntimeError):
    """The backend cannot run here (Ray missing, no cluster at the address, no GPU for a
    timing job); the message says what to do."""


class Backend:
    name = "backend"

    def __init__(self) -> None:
        self._tally: dict[str, Counter] = {}
        self._lock = threading.Lock()

    # -- to implement: the Future of run_job(ref, arg)'s dict -----------------------------
    def _submit(self, kind: str, ref: str, arg: Any) -> Future:
        raise NotImplementedError

    def submit(self, kind: str, ref: str, arg: Any) -> Future:
        """A Future of the job's value; the worker that ran it is tallied when it ends."""
        if kind not in KINDS:
            raise ValueError(f"job kind {kind!r}; use one of {KINDS}")
        raw = self._submit(kind, ref, arg)
        out: Future = Future()

        def done(f: Future) -> None:
            if out.done():                     # cancelled by its caller meanwhile
                return
            try:
                wrapped = f.result()
            except BaseException as err:       # the job raised, or its worker died
                out.set_exception(err)
                return
            self._count(wrapped, kind)
            out.set_result(wrapped["value"])

        raw.add_done_callback(done)
        out.add_done_callback(lambda o: raw.cancel() if o.cancelled() else None)
        return out

    def map(self, kind: str, ref: str, args) -> list[Any]:
        futures = [self.submit(kind, ref, a) for a in args]
        return [f.result() for f in futures]

    def _count(self, wrapped: dict, kind: str) -> None:
        worker = wrapped["worker"] + (f" gpu {wrapped['gpu']}" if kind == "time" and
                                      wrapped.get("gpu") not in (None, "") else "")
        with self._lock:
            self._tally.setdefault(worker, Counter())[kind] += 1

    def workers(self) -> dict[str, dict[str, int]]:
        """{worker: {"verify": n, "time": n}}: the jobs each worker ran so far."""
        with self._lock:
            return {w: {k: c.get(k, 0) for k in KINDS} for w, c in sorted(self._tally.items())}

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "workers": self.workers()}

    def close(self) -> None:
        """Release the workers (idempotent)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SerialBackend(Backend):
    """Every job in this process, in the order submitted: the reference the parallel
    backends are compared against."""
    name = "serial"

    def _submit(self, kind: str, ref: str, arg: Any) -> Future:
        future: Future = Future()
        try:
            future.set_result(run_job(ref, arg))
        except BaseException as err:
            future.set_exception(err)
        return future
