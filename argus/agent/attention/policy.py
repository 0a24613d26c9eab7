"""The embedded planner of the library attention: a model-guided search over the space.

No model provider, no network, deterministic. Step 0 evaluates what argus.ops.attention
runs today for the shape (space.library_default). Every later step scores each
configuration of the space not yet evaluated,
    log(best measured time / corrected prediction)  +  EXPLORE x (new knob values) / knobs
where the prediction is the cost model's (cost_model.py) times a correction learned from
the measurements so far: a ridge regression of log(measured / predicted) on the knob
values (one-hot; RIDGE pulls every weight toward 0, so with few measurements the
correction stays near the model's own ranking). The exploration term favours knob values
no evaluation has had yet, so a knob the model thinks is free (the ring depth, SPLIT_KV
when the loop is not load-bound) still gets measured. A knob value that only failed
configurations have (wrong results, a crash, a hang) is ranked down by FAIL_PENALTY per
failure, so a broken variant is not proposed over and over. The best-scored candidate
whose kernel builds (the space's build probe; a refused one is skipped, never evaluated)
is proposed. On a CPU the evaluator is the cost model itself, so measured and predicted
agree and the search is the model's ranking with exploration.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from argus.agent.attention.config import KNOB_NAMES, AttentionConfig
from argus.agent.attention.cost_model import predict
from argus.agent.attention.space import AttentionSpace
from argus.agent.attention.task import AttentionTask
from argus.agent.evaluators.base import Outcome

EXPLORE = 0.03            # score per new knob value, in log-time units (3% per value)
RIDGE = 1.0               # the correction's prior weight (in measurements)
FAIL_PENALTY = 0.3        # log-time units per failure of a suspect knob value


@dataclass
class Step:
    index: int
    technique: str
    config: AttentionConfig
    outcome: Outcome
    predicted_ms: float
    seconds: float = 0.0
    skipped: list = field(default_factory=list)     # better-scored ones the build refused

    def to_json(self) -> dict:
        return {"index": self.index, "technique": self.technique,
                "config": self.config.to_json(), "outcome": self.outcome.to_json(),
                "predicted_ms": self.predicted_ms, "seconds": round(self.seconds, 3),
                "skipped": self.skipped}


def _features(cfg: AttentionConfig) -> list[tuple]:
    return [(n, getattr(cfg, n)) for n in KNOB_NAMES]


def correction(steps: list[Step], task: AttentionTask):
    """f(cfg) -> log(measured / predicted) expected for cfg, fitted on the ok steps
    (ridge regression on one-hot knob values, solved by Gauss-Seidel sweeps: the
    features are few)."""
    ok = [s for s in steps if s.outcome.ok and s.outcome.time_ms]
    if not ok:
        return lambda cfg: 0.0
    rows = [(_features(s.config), math.log(s.outcome.time_ms / s.predicted_ms)) for s in ok]
    bias = sum(y for _, y in rows) / len(rows)
    weights: dict[tuple, float] = {}
    keys = sorted({f for fs, _ in rows for f in fs}, key=str)
    for _ in range(30):
        for key in keys:
            num = sum(y - bias - sum(weights.get(f, 0.0) for f in fs if f != key)
                      for fs, y in rows if key in fs)
            count = sum(1 for fs, _ in rows if key in fs)
            weights[key] = num / (count + RIDGE)
        bias = sum(y - sum(weights.get(f, 0.0) for f in fs) for fs, y in rows) / len(rows)
    return lambda cfg: bias + sum(weights.get(f, 0.0) for f in _features(cfg))


def suspect_values(steps: list[Step]) -> dict[tuple, int]:
    """{(knob, value): failures} over the values no successful configuration has."""
    done = [s for s in steps if s.outcome.status not in ("unmeasured",)]
    worked = {f for s in done if s.outcome.ok for f in _features(s.config)}
    failures: dict[tuple, int] = {}
    for s in done:
        if not s.outcome.ok:
            hung = (s.outcome.details.get("benchmark") or {}).get("status") == "timeout"
            for f in _features(s.config):
                if f not in worked:
                    failures[f] = failures.get(f, 0) + (2 if hung else 1)
    return failures


def score_candidates(steps: list[Step], task: AttentionTask, space: AttentionSpace,
                     pool: list[AttentionConfig] | None = None) -> list[tuple[float, AttentionConfig, float]]:
    """(score, config, corrected predicted ms) of every unexplored configuration the build
    probe has not refused, best first."""
    pool = list(space.all_accepted(task)) if pool is None else pool
    seen = {s.config.key() for s in steps}
    ok = [s for s in steps if s.outcome.ok and s.outcome.time_ms]
    best_ms = min((s.outcome.time_ms for s in ok), default=None)
    fix = correction(steps, task)
    tried = {f for s in steps for f in _features(s.config)}
    failures = suspect_values(steps)
    ranked = []
    for cfg in pool:
        if cfg.key() in seen or space.known_unbuildable(cfg, task):
            continue
        predicted = predict(cfg, task)["time_ms"] * math.exp(fix(cfg))
        base = best_ms if best_ms is not None else predicted
        new = sum(1 for f in _features(cfg) if f not in tried)
        penalty = FAIL_PENALTY * max((failures.get(f, 0) for f in _features(cfg)), default=0)
        ranked.append((math.log(base / predicted) + EXPLORE * new - penalty, cfg, predicted))
    ranked.sort(key=lambda r: (-r[0], r[1].key()))
    return ranked


def propose(steps: list[Step], task: AttentionTask, space: AttentionSpace,
            prefetch: int = 8) -> tuple[AttentionConfig | None, str, list]:
    """(the next configuration, why, the better-scored ones the build refused); None when
    every configuration was evaluated or refused."""
    ranked = score_candidates(steps, task, space)
    skipped = []
    for i, (score, cfg, predicted) in enumerate(ranked):
        if i % prefetch == 0:
            space.prefetch([c for _, c, _ in ranked[i:i + prefetch]], task)
        errors = space.build_errors(cfg, task)
        if errors:
            skipped.append({"config": cfg.to_json(), "reason": errors[0][:200]})
            continue
        return cfg, (f"score {score:.3f} (corrected prediction {predicted:.3f} ms) among "
                     f"{len(ranked)} unexplored"), skipped
    return None, "no unexplored configuration builds", skipped
