"""DSLError: a user mistake, reported at the user's file:line:col with a hint (and, for a
mistake inside a helper, a note naming each call site that inlined it)."""

from __future__ import annotations

from dataclasses import dataclass

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
            text += f"\n    {self.source_line.rstrip()}\n    {' ' * max(self.loc.col - 1, 0)}^"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        for note in self.notes:
            text += f"\n  {note.loc}: note: {note.text}"
            if note.source_line:
                text += f"\n    {note.source_line.strip()}"
        return text
