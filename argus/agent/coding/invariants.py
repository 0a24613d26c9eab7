"""Invariants a model states, inserted into its kernel as `tag_assert`s so `argus check`
proves them (or returns the counterexample).

An invariant is checked when it is given as {"after": "<a line of the kernel>", "assert":
"<a DSL boolean expression>"}: `tag_assert(<expression>)` goes on the line after the
first line whose text (stripped) is `after`, at that line's indentation (one level deeper
after a line ending in ':'). A prose invariant (a plain string) is recorded, shown back,
and not checked; the prompt says how to make it checked.
"""
from __future__ import annotations

import ast

MAX_INVARIANTS = 10


class InvariantError(ValueError):
    """An invariant that cannot be inserted; the message names it and why."""


def split(invariants: list) -> tuple[list[dict], list[str]]:
    """(checkable {"after", "assert"} objects, prose strings); InvariantError on junk."""
    checked, prose = [], []
    for i, inv in enumerate(invariants[:MAX_INVARIANTS], 1):
        if isinstance(inv, str):
            prose.append(inv[:200])
        elif isinstance(inv, dict) and isinstance(inv.get("after"), str) and \
                isinstance(inv.get("assert"), str):
            checked.append({"after": inv["after"][:300], "assert": inv["assert"][:400]})
        else:
            raise InvariantError(f"invariant {i} must be a string or {{\"after\": \"<line of "
                                 f"the kernel>\", \"assert\": \"<expression>\"}}")
    return checked, prose


def insert(source: str, invariants: list[dict]) -> str:
    """`source` with each invariant inserted as a tag_assert (InvariantError if one's
    expression does not parse or its line is not in the kernel)."""
    lines = source.splitlines()
    for i, inv in enumerate(invariants, 1):
        expr = inv["assert"].strip()
        try:
            ast.parse(expr, mode="eval")
        except SyntaxError as err:
            raise InvariantError(f"invariant {i}: {expr!r} is not a Python expression "
                                 f"({err.msg})") from None
        want = inv["after"].strip()
        at = next((n for n, line in enumerate(lines) if line.strip() == want), None)
        if at is None:
            raise InvariantError(f"invariant {i}: the line {want!r} is not in the kernel; give "
                                 f"\"after\" as one of its lines, verbatim")
        line = lines[at]
        indent = line[:len(line) - len(line.lstrip())]
        if line.rstrip().endswith(":"):
            indent += "    "
        lines.insert(at + 1, f"{indent}tag_assert({expr})  # stated invariant {i}")
    text = "\n".join(lines) + ("\n" if source.endswith("\n") else "")
    if "tag_assert" not in _imports(text) and invariants:
        text = "from argus.lang import tag_assert\n" + text
    return text


def _imports(text: str) -> str:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return "tag_assert"        # let argus check report the syntax error
    names = {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom)
             for a in n.names}
    return "tag_assert" if "tag_assert" in names or "*" in names else ""
