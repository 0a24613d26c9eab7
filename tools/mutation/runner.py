"""Run one mutant: the frontend, the verifier, then the interpreter on two value-mode
seeds and one fragment-exact seed, each result compared with the original file's NumPy
reference (argus.cli.run_reference's inputs, poisoned outputs and tolerance). A step budget
and a wall-clock limit per stage make deadlocks and livelocks cheap to report."""

from __future__ import annotations

import contextlib
import io
import signal
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tools.mutation.classify import CORRECT, Observation, RunOutcome
from tools.mutation.targets import ROOT, Target

RUNS = (("value", 0), ("value", 1), ("exact", 2))
STAGE_SECONDS = 60          # wall-clock limit of the verifier and of each interpreter run


class StageTimeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: int):
    """SIGALRM after `seconds` (the runner's processes run one mutant at a time)."""
    def fire(signum, frame):
        raise StageTimeout(f"over {seconds} s")
    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@dataclass
class Problem:
    """A target's inputs and expected outputs for one seed (shared by all its mutants)."""
    arrays: dict
    expected: dict
    outputs: list          # [(name, dtype)]


_problems: dict[tuple[str, int], Problem] = {}


def problem(target: Target, seed: int, shapes: dict | None = None) -> Problem:
    """The inputs and reference outputs at `shapes` (the target's own by default)."""
    shapes = dict(target.shapes if shapes is None else shapes)
    key = (target.name, seed, tuple(sorted(shapes.items())))
    if key not in _problems:
        if target.problem:
            from tools.mutation import problems
            _problems[key] = getattr(problems, target.problem)(target, seed, shapes)
        else:
            _problems[key] = _make_problem(target, seed, shapes)
    return _problems[key]


def _make_problem(target: Target, seed: int, shapes: dict) -> Problem:
    from argus.cli.run_reference import (call_reference, concrete_shape, example_inputs,
                                         load_reference, poisoned, random_input, split_params)
    from argus.frontend import parse_file

    path = ROOT / target.path
    kernel = parse_file(path, target.overrides)[target.kernel]
    reference = load_reference(path, target.kernel)
    inputs, outputs = split_params(kernel, reference)
    rng = np.random.default_rng(seed)
    symbols = dict(shapes)
    arrays = {p.name: random_input(rng, p.type, symbols) for p in inputs}
    arrays.update(example_inputs(reference, rng, symbols, inputs))
    expected = call_reference(reference, kernel, [arrays[p.name] for p in inputs], outputs)
    arrays.update({p.name: np.zeros(concrete_shape(p.type, symbols), np.float32)
                   if p.name in target.zeroed else
                   poisoned(concrete_shape(p.type, symbols), str(p.type.dtype))
                   for p in outputs})
    return Problem(arrays, expected, [(p.name, str(p.type.dtype)) for p in outputs])


def observe(target: Target, source: str, runs=RUNS) -> Observation:
    """What the frontend, the verifier and the interpreter say about `source` (the whole
    mutated file)."""
    from argus.frontend import parse_source
    from argus.frontend.errors import DSLError
    from argus.verify import verify

    obs = Observation()
    try:
        kernel = parse_source(source, str(Path(target.path)), target.overrides)[target.kernel]
    except DSLError as err:
        obs.frontend, obs.frontend_message = "rejected", f"{err.loc}: {err.message}"
        return obs
    except Exception as err:  # a Python error escaping the frontend is a frontend bug
        obs.frontend, obs.frontend_message = "crash", f"{type(err).__name__}: {err}"
        return obs
    try:
        with time_limit(STAGE_SECONDS):
            findings = verify(kernel)
    except Exception as err:
        obs.verifier_crash = f"{type(err).__name__}: {err}"
        findings = []
    obs.verifier_errors = [f"{f.check} at {f.loc.file}:{f.loc.line}: {f.message}"
                           for f in findings if f.severity == "error"]
    obs.verifier_warnings = sorted({f"{f.check} at line {f.loc.line}" for f in findings
                                    if f.severity == "warning"})
    obs.runs = [run_once(target, kernel, mode, seed) for mode, seed in runs]
    return obs


def run_once(target: Target, kernel, mode: str, seed: int, shapes: dict | None = None,
             seconds: int = STAGE_SECONDS, reverse_blocks: bool = False) -> RunOutcome:
    from argus.cli.run_reference import compare
    from argus.interp.errors import InterpretError
    from argus.interp.evaluator import interpret
    from argus.interp.machine.scheduler import Deadlock, Faulted, StepBudgetExceeded

    prob = problem(target, seed, shapes)
    arrays = {k: v.copy() if hasattr(v, "copy") else v for k, v in prob.arrays.items()}
    try:
        with time_limit(seconds):
            result = interpret(kernel, arrays, seed=seed, mode=mode,
                               step_budget=target.step_budget, reverse_blocks=reverse_blocks)
    except StageTimeout as err:
        return RunOutcome(mode, seed, "timeout", str(err))
    except InterpretError as err:
        return RunOutcome(mode, seed, "error", _short(str(err)))
    except Exception as err:  # the mutant drove the interpreter into a Python error
        return RunOutcome(mode, seed, "error", _short(f"{type(err).__name__}: {err}"))
    if not result.ok:
        run = next(r for r in result.runs.values() if not r.ok)
        kind = {Deadlock: "deadlock", StepBudgetExceeded: "budget", Faulted: "fault"}.get(
            type(run), "race")
        return RunOutcome(mode, seed, kind, _short(str(run)))
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet):
        good = all(compare(name, dtype, result.outputs[name], prob.expected[name])
                   for name, dtype in prob.outputs)
    return RunOutcome(mode, seed, CORRECT if good else "wrong",
                      "" if good else _short(quiet.getvalue().strip()))


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."
