"""Inputs that once hung the checker or crashed it (issue 19, item 7) are DSLErrors at the
user's file:line, found within seconds, before the verifier runs: a non-UTF-8 file, an
expression too deep for the Python parser or for the frontend, a ring of 10000 stages, a
cluster of 2**31 blocks, a block of 2048 threads, 40000 mbarriers, a file over the size
bound. The input files are tests/frontend/data/inputs/ (one mistake each)."""

import time
from pathlib import Path

import pytest

from argus.frontend import DSLError, parse_file
from argus.frontend.source_bounds import decode
from argus.input_limits import MAX_EXPRESSION_DEPTH, MAX_SOURCE_BYTES

INPUTS = Path(__file__).parent / "data" / "inputs"
BASE = (INPUTS / "small_copy.py").read_text()


def _error(path: Path) -> DSLError:
    start = time.monotonic()
    with pytest.raises(DSLError) as caught:
        parse_file(path)
    assert time.monotonic() - start < 5.0, "a diagnostic, but not within seconds"
    return caught.value


@pytest.mark.parametrize("name, line, words", [
    ("latin1_comment.py", 1, "byte 0xe9 is not utf-8 text"),
    ("chain_of_150_terms.py", 12, f"nested over {MAX_EXPRESSION_DEPTH} levels deep"),
    ("ring_of_10000_stages.py", 8, "10000 stages of (64, 64) bf16 are 81920000 B"),
    ("cluster_2_to_31.py", 5, "has 2147483648 blocks, over the 8"),
    ("block_of_2048.py", 5, "block=2048 is over the 1024 threads"),
    ("grid_of_2_to_31.py", 5, "grid.x = 2147483648 is over the 2147483647"),
    ("mbarriers_40000.py", 7, "40000 mbarriers are 320000 B"),
])
def test_each_input_file_is_an_error_at_its_line(name, line, words):
    err = _error(INPUTS / name)
    assert err.loc.file == str(INPUTS / name) and err.loc.line == line, err.format()
    assert words in err.message and err.hint, err.format()


def test_the_base_file_compiles():
    """The generated inputs below are this file with one change each."""
    assert set(parse_file(INPUTS / "small_copy.py")) == {"small_copy"}


def test_100k_term_expression_is_an_error_at_its_line(tmp_path):
    path = tmp_path / "terms.py"
    path.write_text(BASE.replace('    tn = block_id("y")\n',
                                 '    tn = block_id("y") + ' + "+".join(["0"] * 100_000) + "\n"))
    err = _error(path)
    assert err.loc.line == 12 and "too large for the Python parser" in err.message
    assert len(err.format()) < 1000, "the 200 KB line is not quoted whole"


def test_5000_nested_parentheses_are_an_error_at_their_line(tmp_path):
    path = tmp_path / "parens.py"
    path.write_text(BASE.replace('    tn = block_id("y")\n',
                                 '    tn = ' + "(" * 5000 + 'block_id("y")' + ")" * 5000 + "\n"))
    err = _error(path)
    assert err.loc.line == 12 and "nested parentheses" in err.message
    assert len(err.format()) < 1000


def test_deep_statement_nesting_is_an_error_at_its_line(tmp_path):
    body, indent = "", "    "
    for depth in range(101):
        body += f"{indent}if True:\n"
        indent += " "
    body += f"{indent}pass\n"
    path = tmp_path / "nested.py"
    path.write_text("def f():\n" + body)
    err = _error(path)
    assert "too many levels of indentation" in err.message and err.loc.line > 90


def test_a_file_over_the_size_bound_is_refused_unread(tmp_path):
    path = tmp_path / "big.py"
    path.write_text(BASE + "#" * MAX_SOURCE_BYTES)
    err = _error(path)
    assert err.loc.line == 1 and f"over the {MAX_SOURCE_BYTES}" in err.message


def test_a_coding_line_is_honoured():
    text = "# -*- coding: latin-1 -*-\n# caf\xe9\n".encode("latin-1")
    assert decode(text, "k.py").endswith("caf\xe9\n")


def test_a_bad_byte_past_the_first_lines_names_its_line_and_column():
    with pytest.raises(DSLError) as caught:
        decode(b"x = 1\ny = 2\nz = '\xff'\n", "k.py")
    assert (caught.value.loc.line, caught.value.loc.col) == (3, 6)


def test_an_mbarrier_array_over_the_verifier_bound(tmp_path):
    from argus.input_limits import MAX_MBARRIER_ARRAY

    path = tmp_path / "ring.py"
    path.write_text((INPUTS / "mbarriers_40000.py").read_text()
                    .replace("40000", str(MAX_MBARRIER_ARRAY + 1)))
    err = _error(path)
    assert err.loc.line == 7 and f"over the {MAX_MBARRIER_ARRAY} the verifier" in err.message


def test_a_nul_byte_names_its_line(tmp_path):
    path = tmp_path / "nul.py"
    path.write_bytes(b"x = 1\ny = '\x00'\n")
    err = _error(path)
    assert (err.loc.line, err.loc.col) == (2, 6) and "null bytes" in err.message
