"""The verifier over library-kernel specialisations, once per specialisation.

A specialisation is what argus.ops.matmul builds for a configuration: (module, kernel,
constants), e.g. ("gemm", "gemm_nn", (("BN", 128), ("S", 2), ...)). The embedded planner
asks whether one verifies before it proposes it, so a configuration the verifier rejects
(a one-stage ring that frees its stage while the wgmma reading it is in flight) never
costs an evaluation. Kernels do not depend on the problem shape, so one answer serves
every shape of a run.

A specialisation is accepted only when its verdict is "verified": an error finding
rejects it, and so does an unverified result (a check not modelled or not decided, a
crashed pass, a counterexample that did not replay), each reason listed among its
"errors" as "unverified: ...". A verifier pass that is not installed (z3-solver missing)
is an error here, never a silent pass: `VerifierMissing` says what to install.

`prefetch` verifies several specialisations at once as "verify" jobs of an evaluation
backend (argus.agent.parallel: the local process pool of `workers` > 0, or the backend
given, e.g. a Ray cluster), for the planner's next few candidates; the answers are the same
as in-process ones (tests/agent/test_parallel_verify.py). `verify_many` verifies a list at
once; `workers()` says which worker verified how many.
"""
from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import Future

from argus.agent.parallel.backend import Backend, SerialBackend

Spec = tuple  # (module, kernel, ((constant, value), ...))


class VerifierMissing(RuntimeError):
    """A verifier pass could not be imported; the message names it and the fix."""


def verify_spec(spec: Spec) -> dict:
    """{"errors": [str], "missing": [pass], "seconds": float} for one specialisation.

    The kernel is parsed here with the frontend (as argus.ops.library.kernel_ir does)
    rather than through argus.ops, whose import brings torch: seconds of start-up in every
    worker process that verifies, for nothing the verifier needs."""
    from argus.agent.kernel_source import LIBRARY_DIR
    from argus.frontend import parse_file
    from argus.verify.driver import run

    module, name, constants = spec
    start = time.perf_counter()
    try:
        kernels = parse_file(LIBRARY_DIR / f"{module}.py", dict(constants))
        if name not in kernels:
            raise KeyError(f"argus/kernels/{module}.py has no kernel {name!r}")
        kernel = kernels[name]
    except Exception as err:          # the frontend refuses the specialisation
        return {"errors": [f"argus/kernels/{module}.py::{name} does not parse with "
                           f"{dict(constants)}: {err}"], "missing": [],
                "seconds": time.perf_counter() - start}
    report = run(kernel)
    errors = [str(f) for f in report.findings if f.severity == "error"]
    errors += [f"unverified: {f}" for f in report.findings if f.unproved]
    return {"errors": errors, "missing": list(report.missing),
            "seconds": time.perf_counter() - start}


VERIFY_JOB = "argus.agent.library_verifier:verify_spec"


class LibraryVerifier:
    def __init__(self, workers: int = 0, backend: Backend | None = None):
        """`backend`: where prefetched specialisations are verified; else a local pool of
        `workers` processes when workers > 0 (closed with this verifier), else none."""
        self.workers = workers
        self._memo: dict[Spec, dict] = {}
        self._pending: dict[Spec, Future] = {}
        self._backend = backend
        self._owns_backend = False
        self._here = SerialBackend()       # what is verified in this process
        self.runs = 0                  # specialisations verified
        self.seconds = 0.0             # verifier time summed over them (CPU, any process)
        self.wait_seconds = 0.0        # time this process spent waiting for answers

    def _record(self, spec: Spec, answer: dict) -> list[str]:
        if answer["missing"]:
            raise VerifierMissing(
                f"the verifier's {', '.join(answer['missing'])} pass is not installed, so "
                f"kernels cannot be proved; install z3-solver (pip install z3-solver, or the "
                f"wheel in .whl as scripts/device_session.sh does)")
        self._memo[spec] = answer
        self.runs += 1
        self.seconds += answer["seconds"]
        return answer["errors"]

    def errors(self, spec: Spec) -> list[str]:
        """The error findings of `spec` (empty: it verifies), computed once."""
        if spec in self._memo:
            return self._memo[spec]["errors"]
        start = time.perf_counter()
        future = self._pending.pop(spec, None) or self._here.submit("verify", VERIFY_JOB, spec)
        answer = future.result()
        self.wait_seconds += time.perf_counter() - start
        return self._record(spec, answer)

    def known(self, spec: Spec) -> bool:
        return spec in self._memo

    @property
    def backend(self) -> Backend | None:
        if self._backend is None and self.workers > 0:
            from argus.agent.parallel.local_pool import LocalPoolBackend

            self._backend, self._owns_backend = LocalPoolBackend(self.workers), True
        return self._backend

    def prefetch(self, specs) -> None:
        """Start verifying the specialisations not yet known, in parallel (no-op without a
        backend or workers); `errors` then waits only for the one it needs."""
        backend = self.backend
        if backend is None:
            return
        for spec in dict.fromkeys(specs):
            if spec not in self._memo and spec not in self._pending:
                self._pending[spec] = backend.submit("verify", VERIFY_JOB, spec)

    def verify_many(self, specs) -> list[list[str]]:
        """The error findings of each specialisation (in order), verified side by side on
        the backend's workers (in this process without one)."""
        specs = list(specs)
        self.prefetch(specs)
        return [self.errors(spec) for spec in specs]

    def in_process_tally(self) -> dict[str, dict[str, int]]:
        """{this process: {"verify": n, "time": 0}}: what was verified here, not on a worker."""
        return self._here.workers()

    def workers_used(self) -> dict[str, int]:
        """{worker: specialisations it verified}, this process's included."""
        counts: Counter = Counter()
        for backend in (self._here, self._backend):
            if backend is not None:
                for worker, kinds in backend.workers().items():
                    counts[worker] += kinds["verify"]
        return {w: n for w, n in sorted(counts.items()) if n}

    def close(self) -> None:
        for future in self._pending.values():
            future.cancel()
        self._pending.clear()
        if self._owns_backend and self._backend is not None:
            self._backend.close()
            self._backend, self._owns_backend = None, False

    def stats(self) -> dict:
        return {"specialisations": self.runs, "verifier_seconds": round(self.seconds, 3),
                "wait_seconds": round(self.wait_seconds, 3), "workers": self.workers,
                "backend": self._backend.name if self._backend is not None else "in-process",
                "by_worker": self.workers_used()}
