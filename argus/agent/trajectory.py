"""The record of one optimisation episode: every step's proposal, outcome and reward.

Reward (issue 8): the speedup of a correct configuration over the best one before it
(> 1 is an improvement); the first correct configuration gets 1.0; anything that is not
"ok" (invalid, compile error, incorrect, implausible, unparsable reply) gets 0.0. The
reward is computed here from the evaluator's outcome, never taken from the model's reply.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from argus.agent.evaluators.base import Outcome
from argus.agent.gemm_config import GemmConfig, parse_config
from argus.agent.task import GemmTask


@dataclass
class Step:
    index: int
    technique: str
    config: GemmConfig | None          # None when the reply could not be parsed
    outcome: Outcome
    reward: float
    invariants: list[str] = field(default_factory=list)
    rationale: str = ""
    reply_error: str = ""              # why the model's reply was rejected, if it was
    repeated: bool = False             # the config had been evaluated before
    tokens: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    kernel: str = ""                   # the coder step: path of the model-written kernel file
    kernel_library: str = ""           # the library kernel it specialises, if it does

    def kernel_label(self) -> str:
        if not self.kernel:
            return ""
        name = "/".join(self.kernel.replace("\\", "/").split("/")[-2:])
        return name + (f" (specialises {self.kernel_library})" if self.kernel_library else "")

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "technique": self.technique,
                "config": self.config.to_json() if self.config else None,
                "outcome": self.outcome.to_json(), "reward": self.reward,
                "invariants": self.invariants, "rationale": self.rationale,
                "reply_error": self.reply_error, "repeated": self.repeated,
                "tokens": self.tokens, "seconds": self.seconds, "kernel": self.kernel,
                "kernel_library": self.kernel_library}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Step":
        cfg = data.get("config")
        return cls(index=data["index"], technique=data.get("technique", ""),
                   config=parse_config(cfg) if cfg else None,
                   outcome=Outcome.from_json(data["outcome"]), reward=data.get("reward", 0.0),
                   invariants=list(data.get("invariants", [])),
                   rationale=data.get("rationale", ""), reply_error=data.get("reply_error", ""),
                   repeated=bool(data.get("repeated", False)),
                   tokens=dict(data.get("tokens", {})), seconds=data.get("seconds", 0.0),
                   kernel=data.get("kernel", ""), kernel_library=data.get("kernel_library", ""))


def reward_for(outcome: Outcome, best_tflops: float | None) -> float:
    if not outcome.ok:
        return 0.0
    if not best_tflops:
        return 1.0
    return outcome.tflops / best_tflops


@dataclass
class Trajectory:
    task: GemmTask
    start: GemmConfig
    steps: list[Step] = field(default_factory=list)

    def best(self) -> Step | None:
        ok = [s for s in self.steps if s.outcome.ok and s.config is not None]
        return max(ok, key=lambda s: (s.outcome.tflops, -s.index)) if ok else None

    def best_tflops(self) -> float | None:
        b = self.best()
        return b.outcome.tflops if b else None

    def latest_kernel(self) -> Step | None:
        """The most recent step that carried a model-written kernel."""
        return next((s for s in reversed(self.steps) if s.kernel), None)

    def best_kernel(self) -> Step | None:
        """The kept kernel: the best measured one, else the latest that verified clean."""
        ok = [s for s in self.steps if s.kernel and s.outcome.ok]
        if ok:
            return max(ok, key=lambda s: (s.outcome.tflops, -s.index))
        return next((s for s in reversed(self.steps)
                     if s.kernel and s.outcome.status == "unmeasured"), None)

    def seen(self, config: GemmConfig) -> Step | None:
        return next((s for s in self.steps if s.config is not None
                     and s.config.key() == config.key() and not s.repeated), None)

    def to_json(self) -> dict[str, Any]:
        best = self.best()
        return {"task": self.task.describe(), "start": self.start.to_json(),
                "best": best.to_json() if best else None,
                "steps": [s.to_json() for s in self.steps]}
