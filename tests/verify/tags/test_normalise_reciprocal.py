"""o * (1.0 / l): the library attention's normalisation (one reciprocal a row, a multiply an
element) is checked as o / l is, at the multiply: it verifies, and single edits that break
it are errors at that line: the reciprocal of the max, of a sum never accumulated (taken
before the key loop), the accumulator times l; times a row vector the pass gives no
meaning (2 / l) it is unverified. The counterexamples replay (driver.verify keeps only
replayed errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.frontend.parse import parse_source
from argus.verify.driver import verify

PATH = Path(__file__).resolve().parents[3] / "argus" / "kernels" / "attention.py"
SRC = PATH.read_text()
OUT = "out = cast(o_acc * (1.0 / l_i), DT)"


def kernel_of(src: str, causal: int = 0, name: str = "attention_bhsd"):
    return parse_source(src, str(PATH), {"CAUSAL": causal})[name]


def line_of(src: str, text: str) -> int:
    hits = [i + 1 for i, line in enumerate(src.splitlines()) if text in line]
    assert hits, text
    return hits[-1]


def test_the_library_uses_the_reciprocal():
    assert OUT in SRC, "attention.py changed: update this test"


@pytest.mark.parametrize("name", ["attention_bhsd", "attention_bshd"])
@pytest.mark.parametrize("causal", [0, 1])
def test_the_reciprocal_form_verifies(name, causal):
    assert verify(kernel_of(SRC, causal, name)) == []


@pytest.mark.parametrize("form", ["o_acc / l_i", "(1.0 / l_i) * o_acc", "o_acc * (1 / l_i)"])
def test_the_other_forms_verify_too(form):
    assert verify(kernel_of(SRC.replace(OUT, f"out = cast({form}, DT)"))) == []


EDITS = [   # (name, the edit, the line of the error when not the edit's own)
    ("reciprocal of the max", "out = cast(o_acc * (1.0 / m_i), DT)", None),
    ("times the sum", "out = cast(o_acc * l_i, DT)", None),
]


@pytest.mark.parametrize("name, new, at", EDITS, ids=[e[0] for e in EDITS])
def test_a_wrong_normaliser_is_an_error(name, new, at):
    src = SRC.replace(OUT, new)
    found = [(f.check, f.loc.line) for f in verify(kernel_of(src)) if f.severity == "error"]
    assert ("tag.softmax-normalise", line_of(src, at or new)) in found, found


def test_a_reciprocal_taken_before_the_key_loop_is_an_error():
    """1 / l of the initial l (0): the reciprocal is of l as it was, not as the loop leaves
    it."""
    early = "    r_early = 1.0 / l_i\n"
    anchor = "    g0 = tile_start(nj, i)\n    wait(q_full[0], i & 1)\n"
    assert anchor in SRC
    src = SRC.replace(anchor, early + anchor, 1).replace(OUT, "out = cast(o_acc * r_early, DT)")
    found = [(f.check, f.loc.line) for f in verify(kernel_of(src)) if f.severity == "error"]
    assert ("tag.softmax-normalise", line_of(src, "o_acc * r_early")) in found, found


def test_twice_the_reciprocal_is_reported():
    """2 / l is no statistic the pass knows; o times it is twice the softmax average: it
    reaches the store as the unnormalised accumulator, an error there."""
    new = "out = cast(o_acc * (2.0 / l_i), DT)"
    src = SRC.replace(OUT, new)
    found = [(f.check, f.loc.line) for f in verify(kernel_of(src)) if f.severity == "error"]
    assert ("tag.softmax-normalise", line_of(src, "    store(dst, out)")) in found, found
