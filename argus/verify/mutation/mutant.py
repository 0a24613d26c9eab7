"""A mutant: one small edit of a kernel's source, and how the edit is applied.

An edit replaces the text of one AST node (an expression) or one statement with new text;
the rest of the file is untouched, so the diff is the node's line(s) and nothing else."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field


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


@dataclass
class Mutant:
    id: str                      # "gemm_nt-017"
    target: str                  # which kernel target (targets.py)
    operator: str                # operators.py name
    file: str
    line: int
    before: str                  # the changed source line(s), stripped
    after: str
    source: str = field(repr=False)   # the whole mutated file

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def to_json(self) -> dict:
        return {"id": self.id, "target": self.target, "operator": self.operator,
                "file": self.file, "line": self.line, "before": self.before,
                "after": self.after}


def changed_lines(original: str, mutated: str, line: int) -> tuple[str, str]:
    """The first differing line at or after `line` in each text, stripped: the one-line diff
    (a dropped or unwrapped statement shows what replaced it)."""
    a, b = original.splitlines(), mutated.splitlines()
    i = line - 1
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    before = a[i].strip() if i < len(a) else ""
    after = b[i].strip() if i < len(b) else ""
    return before, after


def generate_mutants(target, operators=None) -> list[Mutant]:
    """Every mutant of `target`'s kernel function (targets.Target), one per distinct
    mutated source, numbered in source order within each operator."""
    from argus.verify.mutation.operators import OPERATORS, Context
    from argus.verify.mutation.sites import kernel_function

    source = target.source()
    tree = ast.parse(source)
    ctx = Context.build(tree, kernel_function(tree, target.kernel), target)
    chosen = OPERATORS if operators is None else {k: OPERATORS[k] for k in operators}
    seen = {source}
    out: list[Mutant] = []
    for name, operator in chosen.items():
        for edit in operator(ctx):
            mutated = edit.apply(source)
            if mutated in seen:
                continue
            seen.add(mutated)
            before, after = changed_lines(source, mutated, edit.line)
            out.append(Mutant(f"{target.name}-{len(out):03d}", target.name, name,
                              target.display_path, edit.line, before, after, mutated))
    return out
