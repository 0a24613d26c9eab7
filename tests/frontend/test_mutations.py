"""Robustness: mutated versions of the examples either compile or raise a DSLError at a
line of the mutated file; no other exception escapes (an IRError here would mean the
frontend let through something the IR rejects)."""

import random
from pathlib import Path

import pytest

from argus.frontend import DSLError, parse_source

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.py"))
SWAPS = [("a_s", "b_s"), ("full", "empty"), ("BK", "BN"), ("(64, ", "(32, "), ("k_s", "v_s"),
         ("bf16", "fp32"), ("tile(", "load("), ("wait(", "arrive("), ("[s]", ""),
         ("0.0", "x"), ("wgmma_acc_m64n256", "wgmma_acc_m64n128"), ("i, tm, tn", "tm, tn")]


def _mutants(text: str, seed: int, count: int):
    rng = random.Random(seed)
    lines = text.splitlines()
    for _ in range(count):
        kind = rng.choice(("delete", "duplicate", "swap"))
        i = rng.randrange(len(lines))
        new = list(lines)
        if kind == "delete":
            del new[i]
        elif kind == "duplicate":
            new.insert(i, new[i])
        else:
            a, b = rng.choice(SWAPS)
            hits = [j for j, l in enumerate(new) if a in l]
            if not hits:
                continue
            j = rng.choice(hits)
            new[j] = new[j].replace(a, b, 1)
        yield "\n".join(new) + "\n"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_mutants_compile_or_report(path):
    n_errors = 0
    for mutant in _mutants(path.read_text(), seed=len(path.stem), count=60):
        try:
            parse_source(mutant, "mutant.py")
        except DSLError as err:
            n_errors += 1
            assert err.loc.file == "mutant.py" and 1 <= err.loc.line <= mutant.count("\n") + 1
    assert n_errors > 0   # the mutations do break things; the test is not vacuous
