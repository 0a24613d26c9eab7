"""Releases in a filtered walk (examples/bugs/moe_release/: the library gate-up, whose blocks
walk their items through `if w % BLOCKS == bid` and number the steps themselves): a
release must free its role's own step or the previous one, at every step (or every step
but the first). Each bug is reported at its line with a counterexample, the interpreter
deadlocks on it, and the library kernels themselves still verify."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_file
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from argus.verify.driver import run as verify

ROOT = Path(__file__).resolve().parents[3]
CORPUS = sorted((ROOT / "examples" / "bugs" / "moe_release").glob("*.py"))
EXPECTED = re.compile(r"Expected: ([\w.-]+) at line (\d+)\.")


def test_the_corpus_is_there():
    assert [p.stem for p in CORPUS] == ["release_skips_step_one", "release_two_behind"]


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_bug_is_reported_at_its_line_with_a_counterexample(path):
    check, line = EXPECTED.search(path.read_text()).groups()
    report = verify(parse_file(path)["moe_gate_up"])
    hits = [f for f in report.findings if f.check == check and f.loc.line == int(line)]
    assert hits and hits[0].severity == "error", [str(f) for f in report.findings]
    assert hits[0].counterexample is not None and hits[0].hint
    assert not report.ok


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_bug_deadlocks_on_the_interpreter(path):
    kernel = parse_file(path)["moe_gate_up"]
    rng = np.random.default_rng(0)
    t, k, f, e, p = 64, 128, 128, 8, 200
    counts = rng.multinomial(p, np.full(e, 1.0 / e)).astype(np.int32)
    bf = lambda *s: round_to_bf16(rng.standard_normal(s).astype(np.float32))
    args = {"X": bf(t, k), "W1": bf(e * f, k), "W3": bf(e * f, k),
            "ids": rng.integers(0, t, p).astype(np.int32), "counts": counts,
            "H": np.full((p, f), np.nan, np.float32)}
    result = interpret(kernel, args, seed=0, step_budget=20_000)
    assert not result.ok


@pytest.mark.parametrize("module, name, overrides", [
    ("moe_gate_up", "moe_gate_up", {"BLOCKS": 2, "GATHER": "warpgroup"}),
    ("moe_gate_up", "moe_gate_up", {"E": 64, "GATHER": "warpgroup", "WG": 1,
                                    "CONSUMERS": (1,), "SKIP_EMPTY": 1}),
    ("moe_down", "moe_down", {"BLOCKS": 2}),
])
def test_the_library_releases_verify(module, name, overrides):
    kernel = parse_file(ROOT / "argus" / "kernels" / f"{module}.py", overrides)[name]
    report = verify(kernel)
    assert not [f for f in report.findings if f.check.startswith("protocol.")], \
        [str(f) for f in report.findings]
