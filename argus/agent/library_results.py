"""What a run's result is to the library: whether argus.ops.matmul can run its best
configuration, on what basis its speed stands, and the entry it leaves in the tuning cache.

- `kernel_dtype_refusal`: a dtype the library has no kernel for (fp8 today) is refused
  before a run, instead of "optimised" on the cost model into a speed no kernel has;
- `library_verdict`: the best configuration checked against the library itself
  (`knobs_to_config`, through LibrarySpace.refusal): accepted, with the knobs in the form
  `argus.ops.matmul(a, b, out=c, **knobs)` takes, or refused with matmul's reason; and its
  basis, "measured" (the GPU) or "predicted" (the cost model: never shown as a time);
- `record_best`: the accepted best into the tuning cache (argus/ops/tune_cache.py) under
  the GPU and shape class: a measurement as measured; a cost-model prediction as
  predicted (keyed by the GPU the model describes; it never replaces a measurement).
"""
from __future__ import annotations

from collections.abc import Callable

from argus.agent.library_space import DT_OF, LibrarySpace
from argus.agent.task import GemmTask

LAYOUT = "kn"       # what the evaluators' problem passes: x @ W with W stored K x N


def kernel_dtype_refusal(task: GemmTask) -> str:
    """Why no kernel of the library computes `task`'s dtype ("" when one does)."""
    if task.op != "gemm" or task.dtype in DT_OF:
        return ""
    return (f"dtype {task.dtype}: argus.ops has no {task.op} kernel for it (the library GEMM "
            f"is built for {', '.join(DT_OF)}), so no speed found for it could run; use "
            f"--dtype bfloat16 or --dtype float16")


def basis_of(source: str) -> str:
    return "measured" if source == "gpu" else "predicted"


def library_verdict(task: GemmTask, result, evaluator=None) -> dict:
    """{"accepted", "refusal", "knobs", "basis", "source", "device"} of the run's best."""
    best = result.trajectory.best()
    if best is None or best.config is None:
        return {"accepted": False, "refusal": "no configuration passed", "knobs": None,
                "basis": None, "source": None}
    refusal = LibrarySpace(LAYOUT).refusal(best.config, task)
    source = best.outcome.source
    out = {"accepted": not refusal, "refusal": refusal,
           "knobs": None if refusal else best.config.to_json(),
           "basis": basis_of(source), "source": source}
    if out["basis"] == "predicted":
        from argus.agent.cost_model import DEVICE
        out["device"] = f"NVIDIA {DEVICE} (the cost model's)"
    return out


def record_best(task: GemmTask, result, evaluator, verdict: dict | None,
                gpu_name: Callable) -> tuple[str | None, str]:
    """(the tuning-cache key written, or None; why / what was written)."""
    from argus.agent.cost_model import DEVICE
    from argus.ops.tune_cache import TuneCache, entry_key

    verdict = verdict or library_verdict(task, result, evaluator)
    best = result.trajectory.best()
    if not verdict["accepted"]:
        return None, f"not written: {verdict['refusal']}"
    dtype = DT_OF[task.dtype]
    if verdict["basis"] == "measured":
        if getattr(evaluator, "name", "") != "gpu":
            return None, "not written: measured outside the GPU evaluator"
        key = entry_key(gpu_name(evaluator), dtype, LAYOUT, task.M, task.N, task.K)
        TuneCache().record(key, verdict["knobs"], best.outcome.time_ms, "argus optimize")
        return key, f"written as measured ({best.outcome.time_ms:.4f} ms)"
    key = entry_key(f"NVIDIA {DEVICE}", dtype, LAYOUT, task.M, task.N, task.K)
    if not TuneCache().record(key, verdict["knobs"], None, "argus optimize (cost model)",
                              basis="predicted", predicted_ms=best.outcome.time_ms):
        return None, f"not written: {key} holds a measured configuration"
    return key, ("written as predicted by the cost model (no measured time; argus.ops.matmul "
                 "uses it only where its tuned table has no entry for the shape)")
