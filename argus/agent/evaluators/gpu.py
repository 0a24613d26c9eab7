"""The GPU evaluator: the same static checks, then compile + benchmark on the device.

The benchmark is a callable `benchmark(config: GemmConfig, task: GemmTask) -> dict` with
keys: "status" ("ok", "compile_error", "incorrect", "error", ...), "time_ms" (median
candidate time), "peer_time_ms" (torch.matmul in the same run, optional), "reasons"
(list of strings). Pass your own, or take `default_benchmark`, which runs the candidate
`argus.agent.evaluators.gpu_candidate:gemm` through the harness in one child process for
the whole run (gpu_session.py / gpu_worker.py: one torch import, a watchdog per
configuration, a fresh child after any failure), so the kernel cannot touch the planner,
timers or oracle; `isolated_benchmark` starts one child per configuration
(argus.bench.run_isolated). Nothing GPU-related is imported until a configuration is
evaluated.

When the benchmark measures the library GEMM (argus.ops.matmul), the evaluator carries
its `space` (library_space.py): a configuration matmul refuses is a `compile_error` and one
whose kernel the verifier rejects is `invalid`, both without a measurement; the planner
reads the same space so that it proposes neither.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from argus.agent.evaluators.base import EvaluatorUnavailable, Outcome
from argus.agent.evaluators.cpu import invalid_outcome, space_outcome
from argus.agent.evaluators.gpu_candidate import CONFIG_ENV
from argus.agent.evaluators.gpu_kernel_candidate import KERNEL_ENV
from argus.agent.evaluators.gpu_session import SessionBenchmark
from argus.agent.evaluators.jobs import from_harness, harness_job
from argus.agent.gemm_config import GemmConfig
from argus.agent.kernel_source import b_layout
from argus.agent.library_space import LibrarySpace
from argus.agent.resources import check_resources
from argus.agent.task import GemmTask

MAX_FEEDBACK = 2000
# the "time" job a backend's worker runs (named, not imported: timing.py builds this
# module's default benchmark in the worker)
TIME_JOB = "argus.agent.parallel.timing:time_config"


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def backend_available() -> tuple[bool, str]:
    """Whether argus.ops.matmul (the GPU backend's GEMM) can be imported, and why not."""
    try:
        from argus.ops import matmul  # noqa: F401
    except ImportError as err:
        return False, (f"the GPU backend's GEMM (argus.ops.matmul) is not importable: {err}")
    return True, ""


def _require_gpu_backend() -> None:
    if not cuda_available():
        raise EvaluatorUnavailable("the GPU evaluator needs a CUDA GPU (torch.cuda is not "
                                   "available here); use --evaluator cpu for the cost model")
    ok, why = backend_available()
    if not ok:
        raise EvaluatorUnavailable(why + "; use --evaluator cpu until the backend lands")


def default_benchmark(timeout_s: float = 300.0, reps: int = 50) -> Callable:
    """Every evaluation in one persistent child (gpu_session.SessionBenchmark) under a
    watchdog per configuration: the candidate cannot touch the planner, its timers or the
    oracle. Raises EvaluatorUnavailable where there is no GPU or no GPU backend."""
    _require_gpu_backend()
    return SessionBenchmark(timeout_s=timeout_s, reps=reps)


def isolated_benchmark(timeout_s: float = 300.0, reps: int = 50) -> Callable:
    """Each evaluation in its own child process under the harness's watchdog
    (run_isolated): slower (a torch import per configuration), the same isolation."""
    _require_gpu_backend()

    def benchmark(config: GemmConfig, task: GemmTask) -> dict[str, Any]:
        from argus.bench import run_isolated

        previous = os.environ.get(CONFIG_ENV)
        os.environ[CONFIG_ENV] = json.dumps(config.to_json())
        try:
            return from_harness(run_isolated(harness_job(task, reps), timeout_s=timeout_s))
        finally:
            if previous is None:
                os.environ.pop(CONFIG_ENV, None)
            else:
                os.environ[CONFIG_ENV] = previous

    return benchmark


def default_kernel_benchmark(timeout_s: float = 300.0, reps: int = 50) -> Callable:
    """A model-written kernel file through the harness in a child process
    (gpu_kernel_candidate: parsed, generated, built and launched there, never here)."""
    _require_gpu_backend()

    def benchmark(path: str, task: GemmTask) -> dict[str, Any]:
        from argus.bench import run_isolated

        with open(path, encoding="utf-8") as handle:
            layout = b_layout(handle.read())
        previous = os.environ.get(KERNEL_ENV)
        os.environ[KERNEL_ENV] = str(path)
        try:
            job = harness_job(task, reps, "argus.agent.evaluators.gpu_kernel_candidate:gemm",
                              layout)
            return from_harness(run_isolated(job, timeout_s=timeout_s))
        finally:
            if previous is None:
                os.environ.pop(KERNEL_ENV, None)
            else:
                os.environ[KERNEL_ENV] = previous

    return benchmark


def library_refusal(config: GemmConfig, task: GemmTask) -> str:
    """Why argus.ops.matmul cannot run `config` (knobs the DSL GEMM does not have), without
    starting a child; "" when it can."""
    return LibrarySpace().refusal(config, task)[:MAX_FEEDBACK]


class GpuEvaluator:
    name = "gpu"

    def __init__(self, benchmark: Callable | None = None, device_name: str = "NVIDIA H200",
                 kernel_benchmark: Callable | None = None, space=None,
                 library: bool | None = None):
        """`library`: the benchmark measures argus.ops.matmul (default: when no benchmark is
        given); then `space` (default a LibrarySpace) refuses what the library cannot run
        or the verifier rejects, before any measurement."""
        self._benchmark = benchmark
        self._kernel_benchmark = kernel_benchmark
        self.device_name = device_name
        self._library = benchmark is None if library is None else library
        self.space = (space or LibrarySpace()) if self._library else space

    def ensure_ready(self) -> Callable:
        """The benchmark callable; builds the default one (raising EvaluatorUnavailable
        where it cannot run) on first use."""
        if self._benchmark is None:
            self._benchmark = default_benchmark()
        return self._benchmark

    def evaluate(self, config: GemmConfig, task: GemmTask) -> Outcome:
        violations = check_resources(config, task)
        if violations:
            return invalid_outcome(violations, "gpu")
        bench = self.ensure_ready()      # unavailable (no GPU, no backend) comes first
        failed = self._space_failure(config, task)
        return failed if failed is not None else self._measure(bench, config, task)

    def _space_failure(self, config: GemmConfig, task: GemmTask) -> Outcome | None:
        return None if self.space is None else space_outcome(self.space, config, task, "gpu")

    def evaluate_many(self, configs, task: GemmTask, backend,
                      benchmark_ref: str | None = None) -> list[Outcome]:
        """Several configurations at once: the static checks and the space here, then one
        "time" job per remaining configuration on `backend` (argus.agent.parallel), each
        on a GPU of its own (at most one timing job per GPU at a time), judged as
        `evaluate` judges a measurement. `benchmark_ref` ("module:function") names the
        workers' benchmark; default: the harness's persistent child on their GPU."""
        from argus.agent.parallel.backend import BackendError

        configs = list(configs)
        outcomes: list[Outcome | None] = []
        for config in configs:
            violations = check_resources(config, task)
            outcomes.append(invalid_outcome(violations, "gpu") if violations
                            else self._space_failure(config, task))
        jobs = {i: backend.submit("time", TIME_JOB, {"benchmark": benchmark_ref,
                                                     "config": c.to_json(),
                                                     "task": task.describe()})
                for i, c in enumerate(configs) if outcomes[i] is None}
        for i, future in jobs.items():
            try:
                outcomes[i] = self._judge(future.result(), task)
            except BackendError:
                raise
            except Exception as err:      # the job raised, or its worker died
                outcomes[i] = Outcome(status="compile_error", source="gpu",
                                      feedback=f"{type(err).__name__}: {err}"[:MAX_FEEDBACK])
        return outcomes

    def close(self) -> None:
        """End the benchmark's worker child, if it has one."""
        for bench in (self._benchmark, self._kernel_benchmark):
            close = getattr(bench, "close", None)
            if close is not None:
                close()

    def evaluate_kernel(self, path: str, task: GemmTask) -> Outcome:
        """A model-written DSL kernel file (already verified clean by `argus check`),
        measured through the harness in a child process (default_kernel_benchmark)."""
        if self._kernel_benchmark is None:
            self._kernel_benchmark = default_kernel_benchmark()
        return self._measure(self._kernel_benchmark, path, task)

    def _measure(self, bench: Callable, subject, task: GemmTask) -> Outcome:
        try:
            result = bench(subject, task)
        except EvaluatorUnavailable:
            raise
        except Exception as err:  # a compile failure or crash of the candidate: feedback
            return Outcome(status="compile_error", source="gpu",
                           feedback=f"{type(err).__name__}: {err}"[:MAX_FEEDBACK])
        return self._judge(result, task)

    def _judge(self, result, task: GemmTask) -> Outcome:
        """The benchmark's result dict -> an Outcome (failures with their reasons,
        roofline-implausible times rejected)."""
        from argus.agent.roofline_peaks import plausibility

        if not isinstance(result, dict):
            return Outcome(status="error", source="gpu",
                           feedback=f"the benchmark returned {type(result).__name__}, not a dict")
        status = result.get("status", "error")
        reasons = "; ".join(map(str, result.get("reasons", [])))
        time_ms = result.get("time_ms")
        if status != "ok":
            mapped = status if status in ("compile_error", "incorrect") else (
                "incorrect" if status.startswith("incorrect") or status == "escaped_stream"
                else "error")
            return Outcome(status=mapped, source="gpu", details={"benchmark": result},
                           feedback=f"{status}: {reasons or result.get('stderr_tail', '')}"[:MAX_FEEDBACK])
        if not isinstance(time_ms, (int, float)) or time_ms <= 0:
            return Outcome(status="error", source="gpu", details={"benchmark": result},
                           feedback=f"the benchmark reported ok without a positive time_ms "
                                    f"({time_ms!r})")
        peer = result.get("peer_time_ms")
        ratio = peer / time_ms if isinstance(peer, (int, float)) and peer > 0 else None
        check = plausibility(time_ms / 1e3, task.flops, task.min_bytes, task.dtype,
                             self.device_name, ratio)
        tflops = task.flops / (time_ms / 1e3) / 1e12
        details = {"benchmark": result, "plausibility": check, "ratio_to_peer": ratio}
        if check["flag"]:
            return Outcome(status="implausible", source="gpu", time_ms=time_ms, details=details,
                           feedback=f"rejected: {tflops:.0f} TFLOP/s is implausible ("
                                    f"{'; '.join(check['flag_reasons'])}); re-verify")
        return Outcome(status="ok", tflops=tflops, time_ms=time_ms, source="gpu",
                       details=details,
                       feedback=f"measured {tflops:.0f} TFLOP/s"
                                + (f", {ratio:.2f}x torch.matmul" if ratio else ""))
