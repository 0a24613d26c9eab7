"""A mutant: a kernel's source with one Edit (edit.py) of an operator (operators.py) applied,
and the one-line diff that names it."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from tools.mutation.operators import OPERATORS, Context
from tools.mutation.sites import kernel_function


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


def called_helpers(tree: ast.Module, fn: ast.FunctionDef) -> list[ast.FunctionDef]:
    """The module's @helper functions `fn` calls, directly or through other helpers."""
    helpers = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)
               and any((d.id if isinstance(d, ast.Name) else getattr(d, "attr", None) if not
                        isinstance(d, ast.Call) else getattr(d.func, "id", None)) == "helper"
                       for d in node.decorator_list)}
    found, stack = [], [fn]
    while stack:
        for node in ast.walk(stack.pop()):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in helpers and helpers[node.func.id] not in found:
                found.append(helpers[node.func.id])
                stack.append(helpers[node.func.id])
    return sorted(found, key=lambda f: f.lineno)


def generate_mutants(target, operators=None) -> list[Mutant]:
    """Every mutant of `target`'s kernel function (targets.Target) and of the DSL helpers it
    calls (inlined into it at parse time, so their code is the kernel's), one per distinct
    mutated source, numbered in source order within each operator."""
    source = target.source()
    tree = ast.parse(source)
    kernel = kernel_function(tree, target.kernel)
    contexts = [Context.build(tree, fn, target) for fn in [kernel, *called_helpers(tree, kernel)]]
    chosen = OPERATORS if operators is None else {k: OPERATORS[k] for k in operators}
    seen = {source}
    out: list[Mutant] = []
    for name, operator in chosen.items():
        for edit in (e for ctx in contexts for e in operator(ctx)):
            mutated = edit.apply(source)
            if mutated in seen:
                continue
            seen.add(mutated)
            before, after = changed_lines(source, mutated, edit.line)
            out.append(Mutant(f"{target.name}-{len(out):03d}", target.name, name,
                              target.display_path, edit.line, before, after, mutated))
    return out
