"""The warpgroup gather's bug corpus (examples/bugs/moe_gather): each file names the check and
line the verifier reports, with a counterexample (the barrier, the iteration, sizes), and the
interpreter, run on the file's own routing, does not complete cleanly (a fault, a race or a
deadlock, as its docstring says)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_file
from argus.interp.evaluator import interpret
from argus.verify.driver import run as verify

ROOT = Path(__file__).resolve().parents[3]
CORPUS = sorted((ROOT / "examples" / "bugs" / "moe_gather").glob("*.py"))
EXPECTED = re.compile(r"Expected: ([\w.-]+) at line (\d+)\.")


def _load_inputs(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"bug_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.inputs


def test_the_corpus_is_there():
    assert [p.stem for p in CORPUS] == ["full_counts_one_arrival"]


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_bug_is_reported_at_its_line_with_a_counterexample(path):
    check, line = EXPECTED.search(path.read_text()).groups()
    report = verify(parse_file(path)["moe_gate_up"])
    hits = [f for f in report.findings if f.check == check and f.loc.line == int(line)]
    assert hits and hits[0].severity == "error", [str(f) for f in report.findings]
    f = hits[0]
    assert f.counterexample is not None and f.counterexample.barrier == "full[0]"
    assert "129 arrivals" in f.message and "counts 1" in f.message
    assert "mbarrier_init(full[s], 129)" in f.hint
    assert not report.ok


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_bug_goes_wrong_on_the_interpreter(path):
    kernel = parse_file(path)["moe_gate_up"]
    args = _load_inputs(path)(np.random.default_rng(0), {})
    for seed in range(2):
        result = interpret(kernel, args, seed=seed)
        assert not result.ok, seed
