"""GQA in the bshd layout (argus/verify/tags/heads.py): attention_bshd with G query heads per
KV head is verified with no finding (heads(Q, HD, group=G) tags query head h's columns
with the columns of KV head h // G); a K or V tile of the wrong head, a Q tile of a sibling
query head and an O tile of another head are each reported with a counterexample, and the
bug file kv_wrong_head.py (a copy of the library kernel) at the line its docstring names,
confirmed by the interpreter."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_kernel, parse_source
from argus.interp.evaluator import interpret
from argus.kernels.attention import reference
from argus.ops.library import kernel_ir
from argus.verify.driver import verify

ROOT = Path(__file__).resolve().parents[3]
ATTENTION = ROOT / "argus" / "kernels" / "attention.py"
BUG = ROOT / "examples" / "bugs" / "attention" / "kv_wrong_head.py"
FAST = {(2, 64, 0), (4, 128, 1)}


def _spec(g, hd, causal):
    return pytest.param(g, hd, causal, id=f"G{g}-d{hd}" + ("-causal" if causal else ""),
                        marks=() if (g, hd, causal) in FAST else (pytest.mark.slow,))


@pytest.mark.parametrize("g,hd,causal", [_spec(g, hd, c) for g in (2, 4, 8)
                                         for hd in (64, 128) for c in (0, 1)])
def test_bshd_with_gqa_is_verified(g, hd, causal):
    findings = verify(kernel_ir("attention", "attention_bshd", G=g, HD=hd, CAUSAL=causal))
    assert not findings, [(f.check, f.loc.line, f.message) for f in findings]


@lru_cache(maxsize=None)
def _edited(old: str, new: str):
    text = ATTENTION.read_text()
    assert text.count(old) == 1, old
    kernel = parse_source(text.replace(old, new), str(ATTENTION), {"G": 2})["attention_bshd"]
    return verify(kernel)


def _errors(findings, check):
    return [f for f in findings if f.check == check and f.severity == "error"]


def test_a_q_tile_of_a_sibling_query_head_is_an_operand_head_error():
    # query head h ^ 1 shares h's KV head: every tag of S and O is right, only the head
    # of Q is not O's
    old = "tma_load(q_s[0], tile(q_src, (64 * WGS, HD), (bx, qc)), q_full[0])"
    findings = _edited(old, old.replace("(bx, qc)", "(bx, qc ^ 1)"))
    bad = _errors(findings, "tag.operand-head")
    assert bad and "of Q" in bad[0].message, [(f.check, f.message) for f in findings]
    cex = bad[0].counterexample
    assert cex is not None and cex.block is not None
    e = cex.elements[0]
    assert e.actual["Q.head"] != e.actual["O.head"]


def test_v_of_the_query_head_is_an_operand_head_error():
    old = "tma_load(v_s[s], tile(v_src, (BN, HD), (j, kc)), v_full[s])"
    findings = _edited(old, old.replace("(j, kc)", "(j, qc)"))
    assert any("of V" in f.message for f in _errors(findings, "tag.operand-head")), \
        [(f.check, f.message) for f in findings]


def test_o_stored_into_another_head_is_an_error():
    old = "dst = tile(o_dst, (64, HD), (bx * WGS + wg, qc))"
    findings = _edited(old, old.replace("qc))", "qc ^ 1))"))
    assert _errors(findings, "tag.operand-head"), [(f.check, f.message) for f in findings]


# -- the bug file -------------------------------------------------------------------------
def expected() -> tuple[str, int]:
    m = re.search(r"Expected: (\S+) at line (\d+)\.", BUG.read_text())
    assert m, "kv_wrong_head.py: the docstring must say 'Expected: <check> at line <n>.'"
    return m.group(1), int(m.group(2))


def test_kv_of_the_wrong_head_is_reported_at_its_line():
    want, line = expected()
    findings = verify(parse_kernel(BUG, "attention_bshd"))
    hits = [f for f in findings if f.check == want and f.loc.line == line]
    assert hits, [(f.check, f.loc.line) for f in findings]
    cex = hits[0].counterexample
    assert hits[0].severity == "error" and cex is not None and cex.block is not None
    assert cex.elements[0].actual["a.k"] != cex.elements[0].actual["b.k"]
    # the loads of K and V are named too
    assert {f.loc.line for f in _errors(findings, "tag.operand-head")}


def test_the_interpreter_confirms_the_wrong_head():
    b, hq, hk, sq, sk, d = 1, 4, 2, 64, 128, 64
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((b, h, s, d)).astype(np.float32)
               for h, s in ((hq, sq), (hk, sk), (hk, sk)))
    flat = lambda x: np.ascontiguousarray(x.transpose(0, 2, 1, 3).reshape(b * x.shape[2], -1))
    res = interpret(parse_kernel(BUG, "attention_bshd"),
                    {"Q": flat(q), "K": flat(k), "V": flat(v),
                     "O": np.full((b * sq, hq * d), np.nan, np.float32),
                     "L": np.full(b * hq * sq, np.nan, np.float32), "SQ": sq, "SK": sk})
    assert res.ok, res.failures()
    o = np.asarray(res.outputs["O"], np.float64).reshape(b, sq, hq, d).transpose(0, 2, 1, 3)
    ref, _ = reference(q, k, v, scale=1 / np.sqrt(d))
    err = np.abs(o - ref).max(axis=(0, 2, 3))            # per query head
    assert err[0] < 0.05 and err[1] > 0.2, err           # head 0 reads KV head 0 either way
