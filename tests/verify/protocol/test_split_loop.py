"""A key loop split in two (`for j in range(nf)` then `for j in range(nf, nj)`, the library
attention kernel's MASK="edge"): the protocol model reads both parts as one loop over
[0, nj) whose step is j, the first part under j < nf and the second under nf <= j, so the
consumer's waits and releases meet the producer's `for j in range(nj)` step by step. A
second part that counts its own steps from 0 is a stage error at its line; parts that do
not make that union (a gap, an overlap, nf past nj) stay unmodelled, never clean."""

import pytest

from argus.frontend import parse_source
from argus.ops.library import KERNEL_DIR
from argus.verify import protocol

SOURCE = (KERNEL_DIR / "attention.py").read_text()
SECOND = '''        for j in range(nf, nj):
            block_step(s_acc, m_i, l_i, o_acc, q_rows, k_s, v_s, k_full, v_full, kv_empty,
                       j, g0, bx, wg, q0, k0, SQ, SK, 1)'''


def check(src, name="attention_bhsd", **constants):
    return protocol.check(parse_source(src, "attention.py", constants)[name])


def _line(src, text):
    return next(i + 1 for i, l in enumerate(src.splitlines()) if text in l)


@pytest.mark.parametrize("name", ["attention_bhsd", "attention_bshd"])
@pytest.mark.parametrize("causal", [0, 1])
def test_the_split_key_loop_has_no_protocol_finding(name, causal):
    assert SECOND in SOURCE
    assert check(SOURCE, name, CAUSAL=causal) == []


def test_a_second_part_counting_from_zero_is_a_stage_error():
    src = SOURCE.replace(SECOND, SECOND.replace("j, g0, bx, wg", "j - nf, g0, bx, wg"))
    found = [f for f in check(src) if f.check == "protocol.stage"]
    assert found and found[0].severity == "error"
    assert found[0].loc.line == _line(src, "wait(k_full[s], (g // S) & 1)")
    assert found[0].counterexample is not None


@pytest.mark.parametrize("edit", [
    ("for j in range(nf, nj):", "for j in range(nf + 1, nj):"),     # block nf is skipped
    ("    return minimum(nf, nj)", "    return nf + 1"),              # nf may pass nj
])
def test_parts_that_do_not_split_one_range_are_not_clean(edit):
    assert edit[0] in SOURCE
    found = check(SOURCE.replace(*edit), CAUSAL=1)
    assert found, edit
    assert any(f.check == "protocol.unmodelled" or f.severity == "error" for f in found)
