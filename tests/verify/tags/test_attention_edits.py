"""Flash attention under the tag pass: every specialisation verifies with no finding, and
single edits of examples/flash_attention.py (most of them the mutants the mutation sweep
found unchecked, docs/mutation-report.md) are reported by the check they break, at the
line of the op that breaks it."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.frontend.parse import parse_source
from argus.verify.driver import verify

PATH = Path(__file__).resolve().parents[3] / "examples" / "flash_attention.py"
SRC = PATH.read_text()


def variant(*edits, hd: int = 64, causal: int = 1):
    src = SRC.replace("HD = 64 ", f"HD = {hd} ")
    for old, new in edits:
        assert old in src, f"example changed: {old!r} not found; update this test"
        src = src.replace(old, new)
    return src, parse_source(src, str(PATH), {"CAUSAL": causal})["flash_fwd"]


def line_of(src: str, text: str) -> int:
    hits = [i + 1 for i, line in enumerate(src.splitlines()) if text in line]
    assert hits, text
    return hits[-1]


@pytest.mark.parametrize("hd", [64, 128])
@pytest.mark.parametrize("causal", [1, 0])
def test_flash_attention_verifies_with_no_finding(hd, causal):
    _, kernel = variant(hd=hd, causal=causal)
    assert verify(kernel) == []


# (name, edits, causal, check, the text of the line it is reported at)
EDITS = [
    ("max of a row sum", [("maximum(m_i, row_max(masked))", "maximum(m_i, row_sum(masked))")],
     1, "tag.softmax-max", "m_new = maximum(m_i, row_sum(masked))"),
    ("block max only", [("m_new = maximum(m_i, row_max(masked))", "m_new = row_max(masked)")],
     0, "tag.softmax-rescale", "alpha = exp2(m_i - m_new)"),
    ("max not carried", [("assign(m_i, m_new)", "assign(m_i, m_i)")],
     1, "tag.loop-carried", "assign(m_i, m_i)"),
    ("max never updated", [("            assign(m_i, m_new)\n", "")],
     0, "tag.softmax-rescale", "assign(l_i, l_i * alpha + row_sum(p))"),
    ("p relative to the previous max", [("p = exp2(masked - m_new)", "p = exp2(masked - m_i)")],
     1, "tag.softmax-exp", "p = exp2(masked - m_i)"),
    ("alpha from the new max", [("alpha = exp2(m_i - m_new)", "alpha = exp2(m_new - m_new)")],
     1, "tag.softmax-rescale", "assign(l_i, l_i * alpha + row_sum(p))"),
    ("alpha of nothing", [("alpha = exp2(m_i - m_new)", "alpha = exp2(m_i - m_i)")],
     1, "tag.softmax-sum", "assign(l_i, l_i * alpha + row_sum(p))"),
    ("sum not rescaled", [("l_i * alpha + row_sum(p)", "l_i + row_sum(p)")],
     1, "tag.softmax-sum", "assign(l_i, l_i + row_sum(p))"),
    ("sum of the scores", [("l_i * alpha + row_sum(p)", "l_i * alpha + row_sum(masked)")],
     1, "tag.softmax-sum", "row_sum(masked)"),
    ("sum of a max", [("l_i * alpha + row_sum(p)", "l_i * alpha + row_max(p)")],
     1, "tag.softmax-sum", "row_max(p)"),
    ("sum from alpha squared", [("l_i * alpha + row_sum(p)", "alpha * alpha + row_sum(p)")],
     1, "tag.softmax-sum", "alpha * alpha + row_sum(p)"),
    ("P of the scores", [("convert_layout(cast(p, bf16)", "convert_layout(cast(masked, bf16)")],
     1, "tag.softmax-exp", 'wgmma(o_acc, p16, v_s[s], b_major="mn")'),
    ("V read K-major", [('wgmma(o_acc, p16, v_s[s], b_major="mn")', "wgmma(o_acc, p16, v_s[s])")],
     0, "tag.wgmma-k", "wgmma(o_acc, p16, v_s[s])"),
    ("V of the next block", [("tile(V, (BN, HD), (j, 0))", "tile(V, (BN, HD), (j + 1, 0))")],
     0, "tag.wgmma-k", 'wgmma(o_acc, p16, v_s[s], b_major="mn")'),
    ("mask of the wrong warpgroup offset", [("+ wg * 64\n", "+ wg * 65\n")],
     1, "tag.assert", "tag_assert(keep == (tag(scores).col <= tag(scores).row))"),
    ("every block visited", [("NJ = (bx + 1) * (BM // BN)", "NJ = T // BN")],
     1, "tag.mask-block", "for j in range(NJ):"),
    ("normalised by the max", [("o_acc / l_i", "o_acc / m_i")],
     1, "tag.softmax-normalise", "out = cast(o_acc / m_i, bf16)"),
    ("stored unnormalised", [("out = cast(o_acc / l_i, bf16)", "out = cast(o_acc, bf16)")],
     1, "tag.softmax-normalise", "store(dst, out)"),
    ("keys loaded twice", [("tile(K, (BN, HD), (j, 0))", "tile(K, (BN, HD), (j // 2, 0))"),
                           ("tile(V, (BN, HD), (j, 0))", "tile(V, (BN, HD), (j // 2, 0))")],
     0, "tag.key-coverage", 'wgmma(o_acc, p16, v_s[s], b_major="mn")'),
    ("consumer stops a block early", [("        for j in range(NJ):\n            s = j % S\n"
                                       "            wait(kv_full",
                                       "        for j in range(NJ - 1):\n            s = j % S\n"
                                       "            wait(kv_full")],
     0, "tag.not-modelled", "wgmma(s_acc, q_rows, k_s[s])"),
]


@pytest.mark.parametrize("name,edits,causal,check,at", EDITS, ids=[e[0] for e in EDITS])
def test_an_edit_is_reported_by_the_check_it_breaks(name, edits, causal, check, at):
    src, kernel = variant(*edits, causal=causal)
    findings = verify(kernel)
    line = line_of(src, at)
    hits = [f for f in findings if f.check == check and f.loc.line == line]
    assert hits, f"{name}: no {check} at line {line}; got " + "; ".join(
        f"{f.check}@{f.loc.line}" for f in findings)
    f = hits[0]
    assert f.hint and f.loc.file == str(PATH)
    if f.severity == "error":
        assert f.counterexample is not None and f.counterexample.sizes


def test_a_mask_without_its_specification_is_a_warning():
    """Without tag_assert(keep == ...), the keys of skipped blocks are not verified."""
    src, kernel = variant(("                tag_assert(keep == (tag(scores).col <= "
                           "tag(scores).row))\n", ""))
    findings = verify(kernel)
    assert [f.check for f in findings] == ["tag.key-coverage"]
    assert findings[0].severity == "warning" and "not specified" in findings[0].message


def test_the_mask_specification_can_be_written_either_way():
    src, kernel = variant(("tag_assert(keep == (tag(scores).col <= tag(scores).row))",
                           "tag_assert((tag(scores).row >= tag(scores).col) == keep)"))
    assert verify(kernel) == []


def test_a_mask_written_with_the_opposite_select_verifies():
    """select(drop, -inf, s) with drop = key > query is the same mask."""
    src, kernel = variant(
        ("keep = col_of(scores) + j * BN <= row_of(scores) + bx * BM + wg * 64",
         "keep = col_of(scores) + j * BN > row_of(scores) + bx * BM + wg * 64"),
        ("tag_assert(keep == (tag(scores).col <= tag(scores).row))",
         "tag_assert(keep == (tag(scores).col > tag(scores).row))"),
        ("masked = select(keep, scores, -inf)", "masked = select(keep, -inf, scores)"))
    assert verify(kernel) == []


def test_softmax_state_updated_under_an_if_is_not_modelled():
    src, kernel = variant(("            assign(m_i, m_new)\n",
                           "            if j < NJ:\n                assign(m_i, m_new)\n"))
    findings = verify(kernel)
    assert any(f.check == "tag.not-modelled" and "updated inside an if" in f.message
               for f in findings)
    assert not any(f.severity == "error" for f in findings)


def test_the_running_statistics_carry_row_and_iteration_tags():
    """tag(m_new).iteration == j holds, and == j + 1 is refuted with a counterexample."""
    src, kernel = variant(("tag(m_new).iteration == j)", "tag(m_new).iteration == j + 1)"))
    (f,) = [f for f in verify(kernel) if f.check == "tag.assert"]
    assert f.loc.line == line_of(src, "tag(m_new).iteration == j + 1)")
    assert f.counterexample.thread is not None
