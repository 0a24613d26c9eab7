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

`prefetch` verifies several specialisations at once in a process pool (`workers` > 0),
for the planner's next few candidates; the answers are the same as in-process ones.
"""
from __future__ import annotations

import time
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context

Spec = tuple  # (module, kernel, ((constant, value), ...))


class VerifierMissing(RuntimeError):
    """A verifier pass could not be imported; the message names it and the fix."""


def verify_spec(spec: Spec) -> dict:
    """{"errors": [str], "missing": [pass], "seconds": float} for one specialisation."""
    from argus.ops.library import kernel_ir
    from argus.verify.driver import run

    module, name, constants = spec
    start = time.perf_counter()
    try:
        kernel = kernel_ir(module, name, **dict(constants))
    except Exception as err:          # the frontend refuses the specialisation
        return {"errors": [f"argus/kernels/{module}.py::{name} does not parse with "
                           f"{dict(constants)}: {err}"], "missing": [],
                "seconds": time.perf_counter() - start}
    report = run(kernel)
    errors = [str(f) for f in report.findings if f.severity == "error"]
    errors += [f"unverified: {f}" for f in report.findings if f.unproved]
    return {"errors": errors, "missing": list(report.missing),
            "seconds": time.perf_counter() - start}


class LibraryVerifier:
    def __init__(self, workers: int = 0):
        self.workers = workers
        self._memo: dict[Spec, dict] = {}
        self._pending: dict[Spec, Future] = {}
        self._pool: ProcessPoolExecutor | None = None
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
        future = self._pending.pop(spec, None)
        answer = future.result() if future is not None else verify_spec(spec)
        self.wait_seconds += time.perf_counter() - start
        return self._record(spec, answer)

    def known(self, spec: Spec) -> bool:
        return spec in self._memo

    def prefetch(self, specs) -> None:
        """Start verifying the specialisations not yet known, in parallel (no-op without
        workers); `errors` then waits only for the one it needs."""
        if self.workers <= 0:
            return
        todo = [s for s in dict.fromkeys(specs) if s not in self._memo and s not in self._pending]
        if not todo:
            return
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=get_context("spawn"))
        for spec in todo:
            self._pending[spec] = self._pool.submit(verify_spec, spec)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        self._pending.clear()

    def stats(self) -> dict:
        return {"specialisations": self.runs, "verifier_seconds": round(self.seconds, 3),
                "wait_seconds": round(self.wait_seconds, 3), "workers": self.workers}
