"""Why a mutant is missed (verifier clean, interpreter wrong) or flagged while the
interpreter ran correctly: rules matched against a report row (benchmarks/mutation_report.py
JSON), each naming its kind:

- "not modelled": the soundness statement (docs/design/verifier.md) says the verifier does
  not check this, so a clean verdict claims nothing about it;
- "verifier gap": the verifier should have caught it; a bug to fix (listed in the report);
- "not exercised": the verifier is right, the interpreter's shapes/seeds did not show it;
- "false alarm": the mutant is correct and the verifier says otherwise (a bug to fix).

A row that no rule matches is "unexplained" (the report fails on a missed one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Rule:
    kind: str
    applies: Callable[[dict], bool]
    why: str


RULES: list[Rule] = []


def explain(row: dict) -> Rule | None:
    for rule in RULES:
        if rule.applies(row):
            return rule
    return None
