"""The classes a mutant falls into, from what the frontend, the verifier and the
interpreter said about it.

- rejected-by-frontend: the DSL refused the mutant with a diagnostic (a catch);
- killed: the verifier reports an error and the interpreter confirms a wrong result,
  deadlock, fault or race (a true positive);
- flagged-interpreter-correct: the verifier reports an error but every interpreter run
  matched the reference (a false alarm, or a bug the shapes and seeds did not exercise);
- missed: verifier clean, interpreter wrong (a MISSED BUG: the class that matters);
- equivalent: verifier clean and every run correct;
- frontend-crash / verifier-crash: a Python exception escaped the tool (a tool bug).
"""

from __future__ import annotations

from dataclasses import dataclass, field

REJECTED = "rejected-by-frontend"
KILLED = "killed"
FLAGGED_CORRECT = "flagged-interpreter-correct"
MISSED = "missed"
EQUIVALENT = "equivalent"
FRONTEND_CRASH = "frontend-crash"
VERIFIER_CRASH = "verifier-crash"
CLASSES = (REJECTED, KILLED, FLAGGED_CORRECT, MISSED, EQUIVALENT, FRONTEND_CRASH,
           VERIFIER_CRASH)

# interpreter run outcomes; all but "correct" mean the mutant misbehaved
CORRECT = "correct"
RUN_OUTCOMES = (CORRECT, "wrong", "deadlock", "budget", "fault", "race", "error", "timeout")


@dataclass
class RunOutcome:
    mode: str          # "value" | "exact"
    seed: int
    outcome: str       # one of RUN_OUTCOMES
    detail: str = ""

    def to_json(self) -> dict:
        return {"mode": self.mode, "seed": self.seed, "outcome": self.outcome,
                "detail": self.detail}


@dataclass
class Observation:
    """Everything the runner saw for one mutant."""
    frontend: str = "ok"                  # "ok" | "rejected" | "crash"
    frontend_message: str = ""
    verifier_errors: list = field(default_factory=list)    # ["check at file:line: msg"]
    verifier_warnings: list = field(default_factory=list)  # ["check at file:line"]
    verifier_crash: str = ""
    runs: list = field(default_factory=list)               # [RunOutcome]

    @property
    def interpreter_wrong(self) -> bool:
        return any(r.outcome != CORRECT for r in self.runs)


def classify(obs: Observation) -> str:
    if obs.frontend == "rejected":
        return REJECTED
    if obs.frontend == "crash":
        return FRONTEND_CRASH
    if obs.verifier_crash:
        return VERIFIER_CRASH
    flagged = bool(obs.verifier_errors)
    if not obs.runs:
        raise ValueError("a parsed mutant needs interpreter runs to be classified")
    if flagged:
        return KILLED if obs.interpreter_wrong else FLAGGED_CORRECT
    return MISSED if obs.interpreter_wrong else EQUIVALENT
