"""What a shape of benchmarks/optimize_gemm.py costs on the GPU, before and while it runs.

One evaluation's seconds are modelled per mode as `fixed + per_melem x` the problem's input
elements in millions (M*K + K*N). The full harness (argus.bench.evaluate) draws 6 input
sets on the CPU, ~28 ns per element each on the H200 host of 2026-12-02, so its cost is
nearly proportional to the inputs (fit to that run's 27 evaluations: 0.65 s + 0.169 s per
million; measured medians 5.9 s at 4096^3, 23 s at 8192^3, 12 s at 256x8192x8192). A search-mode evaluation (search_mode.py)
draws its inputs on the device, so its cost is the kernel's build plus fixed work; until a
results file holds search-mode measurements its model is a PRIOR, labelled so.

`calibrate(record)` fits both coefficients (least squares, both kept >= 0) to every
evaluation in a results file that carries `job_seconds` (hand-picked, planner steps, the
re-timing); a mode without measurements keeps its built-in model. `CostBook` serves the
estimates during a run and prefers what this run measured on the same shape.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass

from argus.agent.task import GemmTask

MODES = ("search", "full")
RETIME_EVALUATIONS = 4                 # planner, hand, hand, planner
WORKER_START_S = 10.0                  # python + torch + CUDA context (3.5 s measured), margin


def input_melems(task: GemmTask) -> float:
    """Millions of input elements of one input set (A and B)."""
    return (task.M * task.K + task.K * task.N) / 1e6


@dataclass(frozen=True)
class EvalCost:
    """Seconds of one evaluation in one mode: fixed + per_melem x input millions."""

    fixed_s: float
    per_melem_s: float
    source: str

    def seconds(self, task: GemmTask) -> float:
        return self.fixed_s + self.per_melem_s * input_melems(task)


BUILT_IN = {
    "full": EvalCost(0.65, 0.169, "built in: fit to the 27 full-harness evaluations of the "
                                  "H200 run of 2026-12-02"),
    "search": EvalCost(1.5, 0.005, "built in PRIOR, not yet measured on a GPU (kernel build "
                                   "~0.2-1 s, ~125 kernel calls, 2 fp64 references)"),
}


def fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(fixed, slope) of seconds = fixed + slope x melems by least squares, both >= 0; one
    distinct size gives slope 0 and the median."""
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    if len(set(xs)) < 2:
        return statistics.median(ys), 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    slope = max(0.0, slope)
    fixed = my - slope * mx
    if fixed < 0:                                   # through the origin instead
        fixed, slope = 0.0, sum(x * y for x, y in points) / sum(x * x for x in xs)
    return fixed, slope


def _outcomes(shape: dict):
    """(outcome json, mode) of every evaluation a shape record holds."""
    for entry in (shape.get("hand_picked") or {}).values():
        if "same_as" not in entry and "measured_by" not in entry and "status" in entry:
            yield entry, None
    for step in (shape.get("planner") or {}).get("steps", []):
        if not step.get("repeated"):
            yield step.get("outcome") or {}, None
    for evaluation in (shape.get("retimed") or {}).get("evaluations", []):
        yield {"details": {"benchmark": evaluation}}, "full"


def measurements(record: dict) -> dict[str, list[tuple[float, float]]]:
    """mode -> [(input millions, job seconds)] of every measured evaluation in a results
    file (an evaluation without a recorded mode ran the full harness: the first runs)."""
    out = {mode: [] for mode in MODES}
    if not record.get("measured"):
        return out
    for shape in record.get("shapes", []):
        try:
            task = GemmTask(*(int(v) for v in shape["shape"].split("x")))
        except (KeyError, ValueError, TypeError):
            continue
        for outcome, mode in _outcomes(shape):
            bench = (outcome.get("details") or {}).get("benchmark") or {}
            seconds = bench.get("job_seconds")
            if isinstance(seconds, (int, float)) and seconds > 0:
                out[mode or bench.get("mode") or "full"].append((input_melems(task), seconds))
    return out


def calibrate(record: dict | None) -> dict[str, EvalCost]:
    """The cost model of each mode: fit to `record`'s measurements where it has some, else
    BUILT_IN."""
    models = dict(BUILT_IN)
    if not record:
        return models
    for mode, points in measurements(record).items():
        if points:
            fixed, slope = fit(points)
            models[mode] = EvalCost(fixed, slope, f"fit to {len(points)} {mode}-mode "
                                                  f"evaluations of the run of "
                                                  f"{record.get('date', '?')}")
    return models


class CostBook:
    """Estimated seconds of one evaluation: the median of this run's own measurements of the
    same shape and mode when there are some (wall seconds, so waits count), else the model."""

    def __init__(self, models: dict[str, EvalCost]):
        self.models = models
        self.seen: dict[tuple[str, str], list[float]] = {}

    def observe(self, mode: str, task: GemmTask, seconds: float) -> None:
        self.seen.setdefault((mode, task.shape_text), []).append(seconds)

    def seconds(self, mode: str, task: GemmTask) -> float:
        seen = self.seen.get((mode, task.shape_text))
        return statistics.median(seen) if seen else self.models[mode].seconds(task)

    def source(self, mode: str, task: GemmTask) -> str:
        seen = self.seen.get((mode, task.shape_text))
        return f"{len(seen)} measured in this run" if seen else self.models[mode].source


@dataclass(frozen=True)
class ShapeEstimate:
    shape: str
    search_s: float             # one search-mode evaluation
    full_s: float               # one full-harness evaluation
    planner_evaluations: int
    hand_evaluations: int
    retime_evaluations: int = RETIME_EVALUATIONS

    @property
    def planner_s(self) -> float:
        return self.planner_evaluations * self.search_s

    @property
    def hand_s(self) -> float:
        return self.hand_evaluations * self.search_s

    @property
    def retime_s(self) -> float:
        return self.retime_evaluations * self.full_s

    @property
    def total_s(self) -> float:
        return self.planner_s + self.hand_s + self.retime_s

    def line(self) -> str:
        return (f"{self.shape:16s} search {self.search_s:5.1f} s x ({self.planner_evaluations} "
                f"planner + {self.hand_evaluations} hand-picked) + full {self.full_s:5.1f} s x "
                f"{self.retime_evaluations} re-timing = {self.total_s:4.0f} s")


def estimate_shape(book: CostBook, task: GemmTask, planner_evaluations: int,
                   hand_evaluations: int) -> ShapeEstimate:
    return ShapeEstimate(task.shape_text, book.seconds("search", task),
                         book.seconds("full", task), planner_evaluations, hand_evaluations)
