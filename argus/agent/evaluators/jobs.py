"""The harness's jobs and results as the GPU evaluator sends and reads them.

A job is the dict argus.bench.evaluate runs (problem, candidate, checks, timing); the full
harness's, or the search mode's (gpu_worker, search_mode.py: one check on inputs drawn on
the device, a short timing, the re-check). `from_harness` turns the harness's evaluation
into the benchmark result the evaluator reads. Both the evaluator (gpu.py) and the worker
session (gpu_session.py) build them.
"""
from __future__ import annotations

from typing import Any

from argus.agent.task import GemmTask

# The search mode's timing (search_mode.py): 2 alternating rounds of 3 warm-up + 10 timed
# calls each, CUDA graphs below 50 us a call; the full harness times 10 rounds.
SEARCH_TIMING = {"warmup": 3, "reps": 20, "rounds": 2, "graphs": "auto"}
SEARCH_DISTRIBUTIONS = ("normal", "wide")        # argus.bench.inputs.DISTRIBUTIONS


def from_harness(result: dict) -> dict[str, Any]:
    """The harness's evaluation dict -> the benchmark result the GPU evaluator reads."""
    timing = result.get("timing") or {}
    out = {"status": result.get("status", "error"), "reasons": result.get("reasons", []),
           "stderr_tail": result.get("stderr_tail", "")}
    if isinstance(timing.get("candidate"), dict):
        out["time_ms"] = timing["candidate"].get("median_ms")
        out["peer_time_ms"] = (timing.get("peer") or {}).get("median_ms")
    return out


def harness_job(task: GemmTask, reps: int,
                candidate: str = "argus.agent.evaluators.gpu_candidate:gemm",
                b_layout: str = "kn") -> dict[str, Any]:
    """The full harness's job (argus.bench.evaluate): what every evaluation ran before the
    search mode, and what the final re-timing runs."""
    return {"problem": {"factory": "argus.bench.problems:matmul",
                        "args": {"m": task.M, "n": task.N, "k": task.K, "dtype": task.dtype,
                                 "b_layout": b_layout}},
            "candidate": candidate, "peer": None,
            "device": "cuda", "checks": 2, "seed": 0,
            "timing": {"warmup": 10, "reps": reps}, "tolerance": {"factor": 2.0}}


def search_job(task: GemmTask, seed: int, distribution: str,
               candidate: str = "argus.agent.evaluators.gpu_candidate:gemm") -> dict[str, Any]:
    """A search-mode job (gpu_worker, search_mode.py): one check on inputs drawn on the
    device from `seed` and `distribution`, a short timing, the re-check."""
    job = harness_job(task, SEARCH_TIMING["reps"], candidate)
    job["problem"]["factory"] = "argus.agent.evaluators.device_inputs:matmul"
    job.update(mode="search", checks=1, seed=int(seed), distribution=distribution,
               timing=dict(SEARCH_TIMING))
    return job
