"""DSLError: a user mistake, reported at the user's file:line:col with a hint."""

from __future__ import annotations

from argus.ir.nodes import Loc


class DSLError(Exception):
    def __init__(self, message: str, loc: Loc, hint: str = "", source_line: str = ""):
        self.message = message
        self.loc = loc
        self.hint = hint
        self.source_line = source_line
        super().__init__(self.format())

    def format(self) -> str:
        text = f"{self.loc}: error: {self.message}"
        if self.source_line:
            text += f"\n    {self.source_line.rstrip()}\n    {' ' * max(self.loc.col - 1, 0)}^"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text
