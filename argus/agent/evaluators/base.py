"""The evaluator interface and its result.

Status values: "ok" (valid and measured or predicted), "invalid" (a static check failed:
`violations` hold the counterexamples), "compile_error", "incorrect" (the oracle rejected
the output), "implausible" (faster than the roofline allows: re-verify, never a win),
"error" (the evaluation itself failed), "unmeasured" (a model-written kernel that verified
clean but that this evaluator cannot measure: a new kernel on the CPU). Only "ok" outcomes carry a speed and can become
the best configuration.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from argus.agent.gemm_config import GemmConfig
from argus.agent.task import GemmTask

STATUSES = ("ok", "invalid", "compile_error", "incorrect", "implausible", "error", "unmeasured")


class EvaluatorUnavailable(RuntimeError):
    """The evaluator cannot run here (no GPU, no GPU backend); the message says what is missing."""


@dataclass
class Outcome:
    status: str
    tflops: float | None = None
    time_ms: float | None = None
    source: str = "cost_model"              # "cost_model" or "gpu"
    violations: list[dict[str, Any]] = field(default_factory=list)
    feedback: str = ""                      # text shown to the planner next step (untrusted)
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} not in {STATUSES}")

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.tflops is not None

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "tflops": self.tflops, "time_ms": self.time_ms,
                "source": self.source, "violations": self.violations,
                "feedback": self.feedback, "details": self.details}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Outcome":
        return cls(status=data["status"], tflops=data.get("tflops"), time_ms=data.get("time_ms"),
                   source=data.get("source", "cost_model"),
                   violations=list(data.get("violations", [])),
                   feedback=data.get("feedback", ""), details=dict(data.get("details", {})))


class Evaluator(Protocol):
    name: str

    def evaluate(self, config: GemmConfig, task: GemmTask) -> Outcome: ...
