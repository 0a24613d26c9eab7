"""The pipelined release (the stage of step g - 1 freed at step g, the last step's after
the loop): each step's stage is proved to get exactly the init count of arrivals, and
each way of getting it wrong is reported at its line; the interpreter confirms the
reported bugs are real (a deadlock, or a stage overwritten while it is read)."""

import numpy as np
import pytest

from argus.frontend import parse_source
from argus.interp.evaluator import interpret
from argus.interp.machine.dtypes import BF16
from argus.ops.library import KERNEL_DIR
from argus.verify import verify

SOURCE = (KERNEL_DIR / "gemm.py").read_text()
IN_LOOP = '''                if k > 0:
                    with elect_one():
                        if CM > 1:
                            for r in range(CM):
                                arrive(empty[(g - 1) % S], cta=r)
                        else:
                            arrive(empty[(g - 1) % S])'''
AFTER = '''            wgmma_wait(0)
            with elect_one():
                if CM > 1:
                    for r in range(CM):
                        arrive(empty[(i * KT + KT - 1) % S], cta=r)
                else:
                    arrive(empty[(i * KT + KT - 1) % S])
'''
MUTANTS = {
    "in-loop release dropped": (IN_LOOP, "                if k > 0:\n                    pass",
                                "arrive(empty[(i * KT + KT - 1) % S])", "never completes"),
    "last release dropped": (AFTER, "            wgmma_wait(0)\n",
                             "arrive(empty[(g - 1) % S])", "never completes"),
    "released at every step": (IN_LOOP, "\n".join(l[4:] for l in IN_LOOP.splitlines()[1:]),
                               "arrive(empty[(g - 1) % S])", "another iteration"),
    "releases two steps back": ("arrive(empty[(g - 1) % S])", "arrive(empty[(g + S - 2) % S])",
                                "arrive(empty[(g + S - 2) % S])", "another iteration"),
    "last release of the wrong step": ("arrive(empty[(i * KT + KT - 1) % S])",
                                       "arrive(empty[(i * KT + KT) % S])",
                                       "arrive(empty[(i * KT + KT) % S])", "another iteration"),
}


def _line(src, text):
    return next(i + 1 for i, l in enumerate(src.splitlines()) if text in l)


def test_library_gemm_has_no_finding_at_all():
    for name in ("gemm_nt", "gemm_nn"):
        assert verify(parse_source(SOURCE, "gemm.py")[name]) == []


@pytest.mark.parametrize("bug", MUTANTS)
def test_wrong_release_is_reported_at_its_line(bug):
    old, new, marker, words = MUTANTS[bug]
    assert old in SOURCE
    src = SOURCE.replace(old, new, 1)
    findings = [f for f in verify(parse_source(src, "bug.py")["gemm_nt"])
                if f.check == "protocol.arrival-count"]
    assert findings, bug
    assert findings[0].loc.line == _line(src, marker)
    assert words in findings[0].message
    assert findings[0].counterexample is not None


@pytest.mark.parametrize("bug", ["last release dropped", "releases two steps back"])
def test_the_interpreter_confirms(bug):
    old, new, _, _ = MUTANTS[bug]
    src = SOURCE.replace(old, new, 1).replace("BLOCKS = 132", "BLOCKS = 1")
    ir = parse_source(src, "bug.py")["gemm_nt"]
    rng = np.random.default_rng(0)
    m, n, k = 128, 512, 64 * 6        # one block, two tiles of six k-steps, S = 4
    a = BF16.decode(BF16.encode(rng.standard_normal((m, k)).astype(np.float32)))
    b = BF16.decode(BF16.encode(rng.standard_normal((n, k)).astype(np.float32)))
    res = interpret(ir, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)}, seed=1)
    wrong = not res.ok
    if res.ok:
        got = np.asarray(res.outputs["C"], np.float64)
        ref = a.astype(np.float64) @ b.astype(np.float64).T
        wrong = not (np.isfinite(got).all() and np.abs(got - ref).max() <= 2 ** -6 * np.abs(ref).max())
    assert wrong, f"{bug}: the interpreter ran the mutant right"
