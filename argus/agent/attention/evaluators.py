"""The attention planner's evaluators: one configuration -> an Outcome (evaluators/base.py).

Both judge the space first: a configuration the static rules refuse is a "compile_error"
with the rule's reason, one the build probe refuses is "invalid" with ptxas's, neither
measured. Then:
- CpuAttentionEvaluator: the cost model's prediction (source "cost_model"): a ranking,
  not a timing; every line and file says so.
- GpuAttentionEvaluator: the candidate run in a child process under a watchdog
  (gpu_worker.py through evaluators/gpu_session.WorkerSession: one torch import for the
  run, a fresh child after any failure), where each job draws fresh random inputs on the
  GPU from a seed chosen here, poisons O and the log-sum-exp with NaN, runs
  argus.ops.attention's attention_into with the configuration's knobs, checks O against
  torch SDPA in fp32 (every row) and the log-sum-exp against float64 on sampled rows,
  then times it: CUDA events around each call, warm-up, the L2 flushed before each call,
  the median. A wrong candidate is "incorrect" and never the best; a time under the
  tensor cores' roofline is "implausible".
"""
from __future__ import annotations

import secrets

from argus.agent.attention.config import AttentionConfig
from argus.agent.attention.cost_model import predict
from argus.agent.attention.space import AttentionSpace
from argus.agent.attention.task import AttentionTask
from argus.agent.evaluators.base import EvaluatorUnavailable, Outcome

PEAK_FLOPS = 989.4e12             # H200 dense bf16/fp16, the roofline a time cannot beat
WORKER = "argus.agent.attention.gpu_worker"
TIMING = {"warmup": 5, "reps": 30}


def space_outcome(space: AttentionSpace, cfg: AttentionConfig, task: AttentionTask,
                  source: str) -> Outcome | None:
    why, reasons = space.why_invalid(cfg, task)
    if why == "refused":
        return Outcome("compile_error", source=source, feedback=reasons[0])
    if why == "unbuildable":
        return Outcome("invalid", source="build", feedback="; ".join(reasons)[:2000],
                       details={"build": reasons})
    return None


class CpuAttentionEvaluator:
    name = "cpu-cost-model-attention"

    def __init__(self, space: AttentionSpace):
        self.space = space

    def evaluate(self, cfg: AttentionConfig, task: AttentionTask) -> Outcome:
        failed = space_outcome(self.space, cfg, task, "cost_model")
        if failed is not None:
            return failed
        p = predict(cfg, task)
        return Outcome("ok", tflops=p["tflops"], time_ms=p["time_ms"], source="cost_model",
                       feedback=f"predicted {p['time_ms']:.3f} ms ({p['tflops']:.0f} TFLOP/s, "
                                f"{p['bound']}-bound, balance {p['balance']:.2f})",
                       details={"prediction": p})

    def close(self) -> None:
        pass


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


class GpuAttentionEvaluator:
    name = "gpu-attention"

    def __init__(self, space: AttentionSpace, session=None, timeout_s: float = 90.0,
                 timing: dict | None = None, device: str = "cuda"):
        if session is None:
            if not cuda_available():
                raise EvaluatorUnavailable("the GPU evaluator needs a CUDA GPU (torch.cuda is "
                                           "not available here); use --evaluator cpu")
            from argus.agent.evaluators.gpu_session import WorkerSession

            session = WorkerSession(device, module=WORKER)
        self.space, self.session, self.timeout_s = space, session, timeout_s
        self.timing = dict(timing or TIMING)
        self.device = device
        self.device_name = "NVIDIA H200"

    def job(self, cfg: AttentionConfig, task: AttentionTask) -> dict:
        return {"task": task.describe(), "config": cfg.to_json(),
                "seed": secrets.randbits(31), "timing": self.timing}

    def evaluate(self, cfg: AttentionConfig, task: AttentionTask) -> Outcome:
        failed = space_outcome(self.space, cfg, task, "gpu")
        if failed is not None:
            return failed
        result = self.session.evaluate(self.job(cfg, task), self.timeout_s)
        env = getattr(self.session, "environment", {}) or {}
        self.device_name = env.get("device_name", self.device_name)
        return judge(result, task)

    def close(self) -> None:
        self.session.close()


def judge(result, task: AttentionTask) -> Outcome:
    """A worker's result dict -> an Outcome."""
    if not isinstance(result, dict):
        return Outcome("error", source="gpu", feedback=f"the worker returned "
                                                       f"{type(result).__name__}")
    status = result.get("status", "error")
    reasons = "; ".join(map(str, result.get("reasons", [])))
    if status == "ok" and result.get("verdict") != "correct":
        status = "incorrect"
    if status != "ok":
        mapped = status if status in ("compile_error", "incorrect") else "error"
        return Outcome(mapped, source="gpu", details={"benchmark": result},
                       feedback=f"{status}: {reasons or result.get('stderr_tail', '')}"[:2000])
    time_ms = result.get("time_ms")
    if not isinstance(time_ms, (int, float)) or time_ms <= 0:
        return Outcome("error", source="gpu", details={"benchmark": result},
                       feedback=f"ok without a positive time_ms ({time_ms!r})")
    tflops = task.flops / (time_ms * 1e-3) / 1e12
    if task.flops / PEAK_FLOPS > time_ms * 1e-3:
        return Outcome("implausible", source="gpu", time_ms=time_ms, details={"benchmark": result},
                       feedback=f"{tflops:.0f} TFLOP/s is over the tensor cores' peak; re-verify")
    return Outcome("ok", tflops=tflops, time_ms=time_ms, source="gpu",
                   details={"benchmark": result},
                   feedback=f"measured {time_ms:.4f} ms ({tflops:.0f} TFLOP/s), max error "
                            f"{result.get('max_error')}")
