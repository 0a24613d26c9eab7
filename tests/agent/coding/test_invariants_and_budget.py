"""Stated invariants become tag_asserts that `argus check` proves or refutes; the reply token
budget is sized to the kernel."""
import json
from pathlib import Path

import pytest

from argus.agent import coder
from argus.agent.coding import invariants as inv
from argus.agent.coding.budget import CEILING, FLOOR, reply_tokens
from argus.agent.coding.coder_reply import parse_coder_reply
from argus.agent.reply import ReplyError

REPO = Path(__file__).resolve().parents[3]
COPY = (REPO / "examples/copy.py").read_text()


def test_inserted_after_the_line_at_its_indentation():
    out = inv.insert(COPY, [{"after": 'x = load(src, "blocked")',
                             "assert": "tag(x).row == coord(src)[0]"}])
    lines = out.splitlines()
    at = lines.index('    x = load(src, "blocked")')
    assert lines[at + 1] == "    tag_assert(tag(x).row == coord(src)[0])  # stated invariant 1"


def test_bad_invariants_are_reply_errors():
    with pytest.raises(inv.InvariantError, match="not in the kernel"):
        inv.insert(COPY, [{"after": "no such line", "assert": "True"}])
    with pytest.raises(inv.InvariantError, match="not a Python expression"):
        inv.insert(COPY, [{"after": "tn = block_id(\"y\")", "assert": "tag(x).row =="}])
    with pytest.raises(inv.InvariantError, match="must be a string or"):
        inv.split([42])


def _check(source, tmp_path, index):
    return coder.check_candidate(source, tmp_path, index, compiler=lambda *a: {"ok": True})


def test_a_true_invariant_verifies_and_a_false_one_is_refuted(tmp_path):
    true = inv.insert(COPY, [{"after": 'x = load(src, "blocked")',
                              "assert": "tag(x).col == coord(dst)[1]"}])
    assert _check(true, tmp_path, 1).clean
    false = inv.insert(COPY, [{"after": 'x = load(src, "blocked")',
                               "assert": "tag(x).row == coord(dst)[1]"}])
    checked = _check(false, tmp_path, 2)
    assert not checked.clean and checked.outcome.status == "invalid"
    line = false.splitlines().index(next(l for l in false.splitlines()
                                         if "stated invariant 1" in l)) + 1
    assert f"kernel.py:{line}: error [tag.assert]" in checked.outcome.feedback


def test_a_reply_with_a_file_and_checked_and_prose_invariants():
    reply = json.dumps({"technique": "t", "invariants": [
        "prose only", {"after": "tm = block_id(\"x\")", "assert": "tm >= 0"}]}) + \
        "\n```python\n" + COPY + "```\n"
    p = parse_coder_reply(reply, "")
    assert p.how == "file" and p.prose_invariants == ["prose only"]
    assert "tag_assert(tm >= 0)  # stated invariant 1" in p.source


def test_edits_need_a_kernel_to_apply_to():
    reply = "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"
    with pytest.raises(ReplyError, match="no current kernel to edit"):
        parse_coder_reply(reply, "")


def test_reply_budget_follows_the_kernel():
    small, big = reply_tokens("x" * 100), reply_tokens("x" * 20000)
    assert small == FLOOR and FLOOR < big < CEILING
    assert big > 20000 / 3.2                       # room to repeat the whole kernel
    assert reply_tokens("x" * 10 ** 6) == CEILING
    assert reply_tokens("x" * 20000, max_tokens=777) == 777
