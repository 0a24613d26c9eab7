"""Text output with indentation and source-line comments, and C names for IR values."""

from __future__ import annotations

import re

from argus.ir.nodes import Loc

C_KEYWORDS = {"int", "float", "bool", "char", "for", "if", "else", "while", "do", "return",
              "const", "auto", "break", "continue", "switch", "case", "default", "struct",
              "union", "unsigned", "signed", "long", "short", "double", "void", "static",
              "extern", "volatile", "register", "goto", "sizeof", "typedef", "enum", "new",
              "delete", "class", "this", "template", "typename", "namespace", "using"}


class Emitter:
    def __init__(self, lines: list[str] | None = None):
        self.lines: list[str] = []
        self.level = 0
        self.source_lines = lines or []
        self._last_line: tuple[str, int] | None = None
        self._names: set[str] = set()

    def line(self, text: str = "") -> None:
        self.lines.append(("  " * self.level + text) if text else "")

    def open(self, head: str, comment: str = "") -> None:
        self.line((head + " {" if head else "{") + (f"  // {comment}" if comment else ""))
        self.level += 1

    def close(self, tail: str = "") -> None:
        self.level -= 1
        self.line("}" + tail)

    def at(self, loc: Loc) -> None:
        """A `// file:line: source` comment the first time an op of that line is emitted."""
        key = (loc.file, loc.line)
        if key == self._last_line:
            return
        self._last_line = key
        text = ""
        if 0 < loc.line <= len(self.source_lines):
            text = self.source_lines[loc.line - 1].strip()
        self.line(f"// {loc.file.rsplit('/', 1)[-1]}:{loc.line}: {text}")

    def name(self, ir_name: str) -> str:
        """A fresh C identifier derived from the DSL name (`s.1` -> `s_1`, `12` -> `v12`)."""
        base = re.sub(r"[^0-9A-Za-z_]", "_", ir_name)
        if not base or base[0].isdigit():
            base = "v" + base
        if base in C_KEYWORDS or base.startswith("argus"):
            base = base + "_"
        name, n = base, 1
        while name in self._names:
            n += 1
            name = f"{base}_{n}"
        self._names.add(name)
        return name

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
