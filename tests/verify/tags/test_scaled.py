"""argus/verify/tags/scaled.py: the softmax scale folded into the exponent (the library
attention's FOLD_SCALE = 1: p = exp2(x * c - m * c), the max on the raw scores) verifies,
and single edits that break it are reported by the softmax check they break, at the line
of the op that breaks it: the tile and its max scaled by different constants, p or alpha
left unscaled against the other, a negative scale (which reverses the max) unproved."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.frontend.parse import parse_source
from argus.verify.driver import verify

PATH = Path(__file__).resolve().parents[3] / "argus" / "kernels" / "attention.py"
SRC = PATH.read_text()
P = "p = exp2(masked * SCALE_LOG2 - m_scaled, poly_every=EXP2_POLY)"
ALPHA = "alpha = exp2((m_i - m_new) * SCALE_LOG2)"


def folded(*edits, causal: int = 0, name: str = "attention_bhsd"):
    src = SRC
    for old, new in edits:
        assert old in src, f"attention.py changed: {old!r} not found; update this test"
        src = src.replace(old, new)
    kernel = parse_source(src, str(PATH), {"FOLD_SCALE": 1, "CAUSAL": causal})[name]
    return src, kernel


def line_of(src: str, text: str) -> int:
    hits = [i + 1 for i, line in enumerate(src.splitlines()) if text in line]
    assert hits, text
    return hits[-1]


@pytest.mark.parametrize("name", ["attention_bhsd", "attention_bshd"])
@pytest.mark.parametrize("causal", [0, 1])
def test_the_folded_scale_verifies(name, causal):
    _, kernel = folded(causal=causal, name=name)
    assert verify(kernel) == []


EDITS = [   # (name, edits, check, the text of the line it is reported at)
    ("max scaled by another constant",
     [("m_scaled = m_new * SCALE_LOG2", "m_scaled = m_new * (SCALE_LOG2 * 2)")],
     "tag.softmax-exp", P),
    ("max not scaled", [(P, "p = exp2(masked * SCALE_LOG2 - m_new)")],
     "tag.softmax-exp", "p = exp2(masked * SCALE_LOG2 - m_new)"),
    # l * alpha is then relative to another max than row_sum(p): the sum check fails first
    ("alpha not scaled", [(ALPHA, "alpha = exp2(m_i - m_new)")],
     "tag.softmax-sum", "assign(l_i, l_i * alpha + row_sum(p))"),
    ("alpha scaled by another constant", [(ALPHA, "alpha = exp2((m_i - m_new) * 0.5)")],
     "tag.softmax-sum", "assign(l_i, l_i * alpha + row_sum(p))"),
]


@pytest.mark.parametrize("name, edits, check, at", EDITS, ids=[e[0] for e in EDITS])
def test_a_broken_fold_is_reported_where_it_breaks(name, edits, check, at):
    src, kernel = folded(*edits)
    found = [(f.check, f.loc.line) for f in verify(kernel) if f.severity == "error"]
    assert (check, line_of(src, at)) in found, found


def test_a_negative_scale_is_not_proved():
    """c < 0 reverses the max (the max of -c x is -c times the min of x): no meaning is
    given to the scaled values, so the softmax after them is not proved: the result is
    unverified (not-modelled and undischarged), never a pass and never a false error."""
    src = SRC.replace("SCALE_LOG2 = 1.4426950408889634 / 8.0", "SCALE_LOG2 = -0.18")
    assert src != SRC
    kernel = parse_source(src, str(PATH), {"FOLD_SCALE": 1})["attention_bhsd"]
    checks = {(f.check, f.severity) for f in verify(kernel)}
    assert ("tag.not-modelled", "warning") in checks
    assert ("tag.assert-undischarged", "warning") in checks
    assert all(severity == "warning" for _, severity in checks)
