"""One small edit of a kernel's source, and how it is applied.

An edit replaces the text of one AST node (an expression) or one statement with new text;
the rest of the file is untouched, so the diff is the node's line(s) and nothing else. The
operators (operators.py) yield edits; mutant.py applies them."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """Replace source span (line, col) .. (end_line, end_col) (1-based lines, 0-based cols)
    with `text`; `dedent` > 0 instead removes the span's first line and dedents the
    following lines up to end_line by that many columns (unwrapping a `with`)."""
    line: int
    col: int
    end_line: int
    end_col: int
    text: str
    dedent: int = 0

    @classmethod
    def of(cls, node: ast.AST, text: str) -> "Edit":
        return cls(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset, text)

    def apply(self, source: str) -> str:
        lines = source.splitlines(keepends=True)
        if self.dedent:
            body = [ln[self.dedent:] if ln.startswith(" " * self.dedent) else ln
                    for ln in lines[self.line:self.end_line]]
            return "".join(lines[:self.line - 1] + body + lines[self.end_line:])
        head = lines[self.line - 1][:self.col]
        tail = lines[self.end_line - 1][self.end_col:]
        return "".join(lines[:self.line - 1]) + head + self.text + tail + \
            "".join(lines[self.end_line:])
