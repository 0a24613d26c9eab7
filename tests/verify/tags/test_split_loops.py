"""A key loop split in two parts (`for j in range(nf)` unmasked, `for j in range(nf, nj)`
masked: the library attention's MASK="edge") is verified as one loop: the parts share one
counter (walker.split_loops), the later part continues the earlier one's softmax state
(carried.py: the state it enters with must be its hypothesis at j = nf, with the earlier
part's score tiles the same numbers as its own: same product, same arithmetic, masks that
agree on the earlier blocks), and a score tile reduced without a mask holds only real keys
(mask.real_keys). Each mistake below is caught at its line and gives a wrong answer on the
interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from argus.frontend.parse import parse_source
from argus.interp.evaluator import interpret
from argus.kernels.attention import reference
from argus.ops.library import KERNEL_DIR
from argus.verify.driver import run as verify
from argus.verify.tags.walker import split_loops

SOURCE = (KERNEL_DIR / "attention.py").read_text()
LOG2E = 1.4426950408889634
SMALL = dict(DT="bf16", HD=64, G=1, CAUSAL=0, BN=64, S=2, SCALE_LOG2=LOG2E / 8.0)


def _edited(old: str, new: str) -> str:
    assert old in SOURCE, f"argus/kernels/attention.py changed: {old!r}; update this test"
    return SOURCE.replace(old, new, 1)


def _line(src: str, text: str, after: int = 0) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line and i > after)


def _kernel(src: str, **overrides):
    return parse_source(src, "attention.py", {**SMALL, **overrides})["attention_bhsd"]


def _wrong_on_the_interpreter(src: str, sq=70, sk=150, **overrides) -> bool:
    """One head of sq queries against sk keys (sk off the block: a masked tail block)."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 1, s, 64)).astype(np.float32) for s in (sq, sk, sk))
    res = interpret(_kernel(src, **overrides), {"Q": q[0, 0], "K": k[0, 0], "V": v[0, 0],
                                   "O": np.full((sq, 64), np.nan, np.float32),
                                   "L": np.full(sq, np.nan, np.float32), "SQ": sq, "SK": sk},
                    seed=0)
    ref, _ = reference(q, k, v, False, 1 / 8.0)
    o = np.asarray(res.outputs["O"], np.float64)
    return not res.ok or not np.isfinite(o).all() or np.abs(o - ref[0, 0]).max() > 0.05


def test_the_parts_of_the_consumer_key_loop_are_one_split_loop():
    consumer = next(op for op in _kernel(SOURCE).walk() if op.opcode == "role"
                    and op.attrs["name"] == "consumer")
    parts = split_loops(consumer.regions[0])
    assert len(parts) == 2
    (first, last), = set(parts.values())
    assert last.arg("start") is first.arg("stop")


def test_the_split_loop_verifies_and_the_kernel_is_right():
    report = verify(_kernel(SOURCE))
    assert report.verdict == "verified", [str(f) for f in report.findings]
    assert not _wrong_on_the_interpreter(SOURCE)


def test_parts_that_scale_the_scores_differently_are_caught():
    """The masked part forgets the softmax scale: its scores are not the unmasked part's
    (the scale applied to the scores before the max: FOLD_SCALE = 0)."""
    src = _edited("    else:\n        scores = add_tag(s_acc * SCALE_LOG2, iteration=j)",
                  "    elif mask:\n        scores = add_tag(s_acc, iteration=j)\n"
                  "    else:\n        scores = add_tag(s_acc * SCALE_LOG2, iteration=j)")
    errors = [f for f in verify(_kernel(src, FOLD_SCALE=0)).findings if f.severity == "error"]
    assert errors and {f.check for f in errors} == {"tag.loop-carried"}, errors
    assert any("not computed the same way" in f.message for f in errors)
    # reported at the state the second part (the `for j in range(nf, nj)`) enters with
    second = _line(src, "for j in range(nf, nj)")
    assert all(f"line {second}" in f.message for f in errors)
    assert _wrong_on_the_interpreter(src, FOLD_SCALE=0)


def test_an_unmasked_part_over_the_tail_block_is_caught():
    """The unmasked part runs over every block, the last one's keys past SK included."""
    src = _edited("    return minimum(nf, nj)", "    return nj")
    report = verify(_kernel(src))
    (f,) = [f for f in report.findings if f.check == "tag.mask-keys"]
    assert f.severity == "error" and f.loc.line == _line(src, "m_new = maximum(m_i, row_max(")
    assert "unmasked" in f.message and f.hint
    assert f.counterexample is not None and f.counterexample.sizes
    assert _wrong_on_the_interpreter(src)
