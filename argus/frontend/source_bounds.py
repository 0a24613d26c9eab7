"""The bounds on a kernel file checked before it is compiled (argus/input_limits.py):
its size, its encoding, and how deep one expression's syntax tree nests.

Each failure is a DSLError at the user's file:line, so a file of a million terms, 5000
nested parentheses or Latin-1 bytes gets a diagnostic in well under a second rather
than a RecursionError, a MemoryError or a UnicodeDecodeError traceback.
"""
from __future__ import annotations

import ast
import io
import tokenize

from argus.input_limits import MAX_EXPRESSION_DEPTH, MAX_SOURCE_BYTES
from argus.ir.nodes import Loc

from .errors import DSLError


def read_source(path) -> str:
    """The text of the kernel file at `path` (a pathlib.Path): bounded in size, decoded
    as its PEP 263 coding line says (UTF-8 when it has none)."""
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            raise DSLError(f"the file is {size} bytes, over the {MAX_SOURCE_BYTES} a kernel "
                           f"file may have", Loc(str(path), 1, 1),
                           "a kernel file holds a few kernels; split it into several files")
        data = path.read_bytes()
    except OSError as err:
        raise DSLError(f"cannot read the file: {err.strerror or err}", Loc(str(path), 1, 1),
                       "give the path of a readable Python file") from None
    return decode(data, str(path))


def decode(data: bytes, filename: str) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        if "invalid or missing" not in str(err):   # an unknown coding name, a contradicting BOM
            raise DSLError(f"bad encoding declaration: {err}", Loc(filename, 1, 1),
                           "save the file as UTF-8 without a coding line") from None
        encoding = "utf-8"    # a non-UTF-8 byte in the first two lines: located below
    try:
        return data.decode("utf-8-sig" if encoding == "utf-8-sig" else encoding)
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        col = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        shown = data.splitlines()[line - 1].decode(encoding, "replace") \
            if line <= len(data.splitlines()) else ""
        raise DSLError(f"byte 0x{data[err.start]:02x} is not {encoding} text", Loc(filename, line, col),
                       f"save the file as {encoding.upper()} (or declare its encoding in a "
                       f"'# -*- coding: NAME -*-' first line)", shown) from None


def parse_tree(source: str, filename: str) -> ast.Module:
    """ast.parse with the nesting bound: a syntax error, a tree too deep for the parser,
    and a statement nested over MAX_EXPRESSION_DEPTH deep are DSLErrors at their line."""
    lines = source.splitlines()
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as e:
        line, col = e.lineno or 1, e.offset or 1
        if "\0" in source and "null bytes" in str(e.msg):   # the parser names no line for it
            at = source.index("\0")
            line, col = source.count("\n", 0, at) + 1, at - (source.rfind("\n", 0, at) + 1) + 1
        raise DSLError(f"syntax error: {e.msg}", Loc(filename, line, col),
                       "fix the Python syntax", e.text or (lines[line - 1] if line <= len(lines)
                                                          else "")) from None
    except (RecursionError, MemoryError):   # CPython's parser gives up on its own stack
        line = _largest_statement(source)
        raise _too_deep(filename, line, 1, lines, "an expression too large for the Python parser to nest") from None
    check_depth(tree, filename, lines)
    return tree


def check_depth(tree: ast.Module, filename: str, lines: list[str]) -> None:
    """Every expression nests at most MAX_EXPRESSION_DEPTH deep below its statement
    (walked with a stack: no recursion). Statements cannot nest deeper than Python's own
    limit of 100 indentation levels, a syntax error."""
    stack = [(tree, 0)]        # node, expression depth below its statement
    while stack:
        node, depth = stack.pop()
        depth = depth + 1 if isinstance(node, ast.expr) else 0
        if depth > MAX_EXPRESSION_DEPTH:
            raise _too_deep(filename, node.lineno, node.col_offset + 1, lines,
                            f"an expression nested over {MAX_EXPRESSION_DEPTH} levels deep")
        stack.extend((child, depth) for child in ast.iter_child_nodes(node))


def _too_deep(filename: str, line: int, col: int, lines: list[str], what: str) -> DSLError:
    return DSLError(what, Loc(filename, line, col),
                    "split it into named steps (a few terms or one call per line)",
                    lines[line - 1] if 0 < line <= len(lines) else "")


def _largest_statement(source: str) -> int:
    """The first line of the logical line with the most tokens (where the parser ran out of
    stack); line 1 when the text does not tokenize."""
    best, best_count, start, count = 1, -1, 1, 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if count == 0:
                start = tok.start[0]
            count += 1
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                if count > best_count:
                    best, best_count = start, count
                count = 0
    except (tokenize.TokenError, SyntaxError, RecursionError, MemoryError):
        pass
    return best
