"""Search/replace edit blocks: parsed, applied in order, and a clear error naming the block
when one does not match or matches several places."""
import pytest

from argus.agent.coding.edits import EditError, apply_edits, parse_edits

BASE = "def k():\n    a = 1\n    b = 2\n    a = 1\n    return a + b\n"


def _block(search, replace):
    return f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def test_blocks_apply_in_order():
    text = "first:\n" + _block("    b = 2\n", "    b = 3\n") + _block("    b = 3\n", "    b = 4\n")
    edits = parse_edits(text)
    assert len(edits) == 2
    assert apply_edits(BASE, edits) == BASE.replace("b = 2", "b = 4")


def test_whitespace_around_lines_is_forgiven_once_unique():
    edits = parse_edits(_block("  return a + b  \n", "    return a * b\n"))
    assert apply_edits(BASE, edits).endswith("    return a * b\n")


def test_a_block_that_does_not_match_names_itself_and_its_first_line():
    edits = parse_edits(_block("    b = 2\n", "    b = 5\n") + _block("    c = 9\n", "    c = 1\n"))
    with pytest.raises(EditError, match=r"edit block 2: .*'c = 9'.* does not occur"):
        apply_edits(BASE, edits)


def test_an_ambiguous_block_asks_for_more_context():
    with pytest.raises(EditError, match=r"edit block 1: .*occurs 2 times"):
        apply_edits(BASE, parse_edits(_block("    a = 1\n", "    a = 0\n")))


def test_an_unclosed_block_is_an_error_and_no_block_is_none():
    with pytest.raises(EditError, match="complete blocks"):
        parse_edits("<<<<<<< SEARCH\n    a = 1\n=======\n    a = 2\n")
    assert parse_edits("just a ```python block```") == []
