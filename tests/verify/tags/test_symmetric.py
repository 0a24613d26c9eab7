"""One walk for all the warpgroups of a role (argus/verify/tags/symmetric.py): which roles
take it, that it reports what the per-warpgroup walks report on the attention bug corpus,
and that the bugs only two warpgroups together make (two warpgroups on one band of rows)
are caught by it with a counterexample that names both."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.frontend import parse_file
from argus.frontend.parse import parse_source
from argus.verify.driver import verify
from argus.verify.tags import symmetric

ROOT = Path(__file__).resolve().parents[3]
ATTENTION = ROOT / "argus" / "kernels" / "attention.py"
GEMM = ROOT / "argus" / "kernels" / "gemm.py"


def _role(kernel, name):
    return next(op for op in kernel.walk() if op.opcode == "role" and op.attrs["name"] == name)


def _library(**consts):
    src = ATTENTION.read_text()
    return src, parse_source(src, str(ATTENTION), consts or None)


def test_the_attention_consumers_are_walked_once():
    kernel = _library()[1]["attention_bhsd"]
    consumer = _role(kernel, "consumer")
    assert len(consumer.attrs["warpgroups"]) == 2
    assert symmetric.walkable(consumer.regions[0])


def test_a_role_with_tma_stores_is_walked_per_warpgroup():
    # the GEMM's TMA-store epilogue: its records are compared pairwise by warpgroup
    kernel = parse_file(GEMM, overrides={"WG": 2, "EPILOGUE": "smem_tma"})["gemm_nt"]
    consumer = _role(kernel, "consumer")
    assert len(consumer.attrs["warpgroups"]) == 2
    assert not symmetric.walkable(consumer.regions[0])


def _edited(old, new, name="attention_bhsd", at=None):
    """The library attention with one edit, and the line of `at` (default: the edit)."""
    src = ATTENTION.read_text()
    assert old in src, f"the library attention changed: {old!r}; update this test"
    src = src.replace(old, new)
    line = next(i + 1 for i, text in enumerate(src.splitlines()) if (at or new) in text)
    return parse_source(src, str(ATTENTION))[name], line


def test_two_warpgroups_storing_one_band_race():
    kernel, line = _edited("dst = tile(o_dst, (64, HD), (bx * WGS + wg, qc))",
                           "dst = tile(o_dst, (64, HD), (bx * WGS, qc))", at="store(dst, out)")
    findings = [f for f in verify(kernel) if f.severity == "error"]
    races = [f for f in findings if f.check == "tag.store-race"]
    assert races, "; ".join(f"{f.check}@{f.loc.line}" for f in findings)
    cex = races[0].counterexample
    second = cex.elements[0].actual["second writer"]
    # both writers are consumer warpgroups (1 and 2), and not the same one
    assert {cex.warpgroup, second["warpgroup"]} == {1, 2}
    assert races[0].loc.line == line


def test_two_warpgroups_reading_one_band_of_q_fail_the_row_assert():
    kernel, line = _edited("q_rows = tile(q_s[0], (64, HD), (wg, 0))",
                           "q_rows = tile(q_s[0], (64, HD), (0, 0))")
    findings = [f for f in verify(kernel) if f.severity == "error"]
    asserts = [f for f in findings if f.check == "tag.assert"]
    assert asserts, "; ".join(f"{f.check}@{f.loc.line}" for f in findings)
    # warpgroup 1 (the first consumer) reads its own band; the second reads the first's
    assert any(f.counterexample.warpgroup == 2 for f in asserts)


def test_a_band_below_the_stage_is_caught_at_its_line():
    # at wg = 0 the band starts 64 rows before the stage: its end wraps back inside
    kernel, line = _edited("q_rows = tile(q_s[0], (64, HD), (wg, 0))",
                           "q_rows = tile(q_s[0], (64, HD), ((wg - 1), 0))")
    views = [f for f in verify(kernel) if f.check == "tag.smem-view"]
    assert views and views[0].severity == "error" and views[0].loc.line == line
    assert "rows -64..-1" in views[0].message


def _per_warpgroup(monkeypatch):
    monkeypatch.setattr(symmetric, "walkable", lambda region: False)


def _summary(kernel):
    return sorted({(f.check, f.severity, f.loc.line) for f in verify(kernel)})


BUGS = sorted((ROOT / "examples" / "bugs" / "attention").glob("*.py"))
SAMPLE = {"store_wrong_rows.py", "kv_wrong_head.py", "mask_off_by_one.py"}


@pytest.mark.parametrize("path", [
    pytest.param(p, marks=() if p.name in SAMPLE else pytest.mark.slow, id=p.stem)
    for p in BUGS])
def test_the_bug_corpus_gets_the_per_warpgroup_walks_findings(path, monkeypatch):
    kernels = parse_file(path)
    once = {name: _summary(k) for name, k in kernels.items()}
    _per_warpgroup(monkeypatch)
    each = {name: _summary(k) for name, k in kernels.items()}
    assert once == each
    assert any(f[1] == "error" for fs in once.values() for f in fs)


@pytest.mark.parametrize("causal, hd", [(1, 128), (0, 64)])
def test_the_library_attention_verifies_either_way(causal, hd, monkeypatch):
    kernel = _library(CAUSAL=causal, HD=hd)[1]["attention_bshd"]
    assert verify(kernel) == []
    _per_warpgroup(monkeypatch)
    assert verify(kernel) == []
