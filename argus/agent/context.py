"""What the planner knows at one step: the structured state behind every prompt."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from argus.agent.gemm_config import GemmConfig
from argus.agent.knowledge import Technique
from argus.agent.trajectory import Trajectory


@dataclass
class PlannerContext:
    trajectory: Trajectory
    knowledge: list[Technique]
    evaluator: str
    lessons: list[dict] = field(default_factory=list)
    budget_left: int = 0
    space: Any = None           # a LibrarySpace when proposals must be library kernels (GPU)

    @property
    def task(self):
        return self.trajectory.task

    def best_config(self) -> GemmConfig:
        best = self.trajectory.best()
        return best.config if best else self.trajectory.start
