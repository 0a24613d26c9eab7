"""The attention planner's loop: evaluate the start (what argus.ops.attention runs today),
then, while the budget lasts, propose (policy.py), evaluate, record.

The budget is planner.Budget's (evaluations, seconds); DEFAULT_BUDGET is the command's
default. The seconds budget is kept, not overrun: a step is not started when the median
evaluation so far would end past it. The run's best is the fastest "ok" step.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from argus.agent.attention.config import AttentionConfig
from argus.agent.attention.cost_model import predict
from argus.agent.attention.policy import Step, propose
from argus.agent.attention.space import AttentionSpace
from argus.agent.attention.task import AttentionTask
from argus.agent.evaluators.base import EvaluatorUnavailable, Outcome
from argus.agent.planner import Budget

DEFAULT_EVALUATIONS = 16
DEFAULT_SECONDS = 240.0


def default_budget() -> Budget:
    return Budget(evaluations=DEFAULT_EVALUATIONS, seconds=DEFAULT_SECONDS)


@dataclass
class AttentionRun:
    task: AttentionTask
    steps: list[Step]
    stop_reason: str
    seconds: float
    evaluations: int
    budget: dict = field(default_factory=dict)

    def best(self) -> Step | None:
        ok = [s for s in self.steps if s.outcome.ok and s.outcome.time_ms]
        return min(ok, key=lambda s: (s.outcome.time_ms, s.index)) if ok else None

    def to_json(self) -> dict:
        best = self.best()
        return {"task": self.task.describe(), "stop_reason": self.stop_reason,
                "seconds": round(self.seconds, 2), "evaluations": self.evaluations,
                "budget": self.budget,
                "best": best.to_json() if best else None,
                "steps": [s.to_json() for s in self.steps]}


def _median_step_s(steps: list[Step]) -> float:
    spent = sorted(s.seconds for s in steps)
    return spent[len(spent) // 2] if spent else 0.0


def _evaluate(evaluator, cfg: AttentionConfig, task: AttentionTask) -> Outcome:
    try:
        return evaluator.evaluate(cfg, task)
    except EvaluatorUnavailable:
        raise
    except Exception as err:          # the evaluator failing is this step's outcome
        return Outcome(status="error", source=getattr(evaluator, "name", "?"),
                       feedback=f"the evaluator failed: {type(err).__name__}: {err}"[:1500])


def run_planner(evaluator, task: AttentionTask, space: AttentionSpace,
                budget: Budget | None = None, start: AttentionConfig | None = None,
                on_step: Callable[[Step, list], None] | None = None,
                clock: Callable[[], float] = time.monotonic) -> AttentionRun:
    budget = budget or default_budget()
    began = clock()
    steps: list[Step] = []

    def record(technique, cfg, why_skipped=()):
        t0 = clock()
        outcome = _evaluate(evaluator, cfg, task)
        step = Step(len(steps), technique, cfg, outcome, predict(cfg, task)["time_ms"],
                    clock() - t0, list(why_skipped))
        steps.append(step)
        if on_step:
            on_step(step, steps)

    start = start or space.library_default(task)
    record("start: the library's configuration", start)
    stop = "budget: evaluations"
    while True:
        if len(steps) >= budget.evaluations:
            stop = "budget: evaluations"
            break
        if clock() - began + _median_step_s(steps) > budget.seconds:
            stop = "budget: seconds"
            break
        cfg, why, skipped = propose(steps, task, space)
        if cfg is None:
            stop = f"planner stopped: {why}"
            break
        record(why, cfg, skipped)
    return AttentionRun(task, steps, stop, clock() - began, len(steps),
                        {"evaluations": budget.evaluations, "seconds": budget.seconds})
