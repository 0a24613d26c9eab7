"""DSLError: a user mistake, reported at the user's file:line:col with a hint (and, for a
mistake inside a helper, a note naming each call site that inlined it)."""

from __future__ import annotations

from dataclasses import dataclass

from argus.input_limits import MAX_SOURCE_LINE_SHOWN
from argus.ir.nodes import Loc


@dataclass(frozen=True)
class Note:
    """Where the error's code was reached from: `loc: note: text`, then that line."""
    loc: Loc
    text: str
    source_line: str = ""


class DSLError(Exception):
    def __init__(self, message: str, loc: Loc, hint: str = "", source_line: str = "",
                 notes: tuple[Note, ...] = ()):
        self.message = message
        self.loc = loc
        self.hint = hint
        self.source_line = source_line
        self.notes = tuple(notes)
        super().__init__(self.format())

    def format(self) -> str:
        text = f"{self.loc}: error: {self.message}"
        if self.source_line:
            line, col = _excerpt(self.source_line.rstrip(), max(self.loc.col - 1, 0))
            text += f"\n    {line}\n    {' ' * col}^"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        for note in self.notes:
            text += f"\n  {note.loc}: note: {note.text}"
            if note.source_line:
                text += f"\n    {_excerpt(note.source_line.strip(), 0)[0]}"
        return text


def _excerpt(line: str, col: int) -> tuple[str, int]:
    """At most MAX_SOURCE_LINE_SHOWN characters of `line` around 0-based column `col`, and
    the caret's column in them (a line of 100k characters is not printed whole)."""
    width = MAX_SOURCE_LINE_SHOWN
    if len(line) <= width:
        return line, col
    start = max(0, min(col - width // 2, len(line) - width))
    head, tail = ("..." if start else ""), ("..." if start + width < len(line) else "")
    return head + line[start:start + width] + tail, col - start + len(head)
