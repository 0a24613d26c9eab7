"""The one error the code generator raises: an op it cannot lower, at the user's line."""

from __future__ import annotations

from argus.ir.nodes import Loc


class CodegenError(Exception):
    """`file:line: message; hint` for a kernel the Hopper backend cannot generate."""

    def __init__(self, message: str, loc: Loc | None = None, hint: str = ""):
        self.message, self.loc, self.hint = message, loc, hint
        where = f"{loc.file}:{loc.line}: " if loc is not None else ""
        super().__init__(f"{where}{message}" + (f"; {hint}" if hint else ""))
