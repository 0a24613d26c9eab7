"""A kernel file's NumPy reference, read from its syntax tree: the file is never imported.

A kernel file may come from an untrusted model, so `argus run` does not execute it to find
its `reference` (module-level code would run in the harness). It parses the file and keeps
only what a reference needs, as text for the isolated child that runs it
(argus/cli/reference_sandbox.py):

- imports of the modules a reference computes with (ALLOWED_IMPORTS: numpy, math, ...);
- plain functions (no decorators) that are not kernels: the reference, `inputs`, their
  helpers; a function's body runs only when the child calls it;
- the module constants, as the frontend folds them (literal values, no code).

Every other top-level statement (calls, assignments of computed values, classes, `if`
blocks, decorated functions, the kernels) is dropped: it never runs anywhere. The kept
statements keep their line numbers (the dropped ones become blank lines), so an error in
the reference names the user's file:line.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from argus.cli.errors import UsageError

ALLOWED_IMPORTS = ("numpy", "math", "functools", "itertools", "operator", "collections")
_NO_LITERAL = object()   # a default that is not a literal: its value is not known here


@dataclass
class Reference:
    """What `argus run` knows of the reference without running the file."""
    path: Path
    name: str                          # reference_<kernel> or reference
    line: int                          # where it is defined
    params: tuple[str, ...]            # positional parameter names, in order
    defaults: dict[str, object]        # parameter -> literal default (None if not literal)
    has_inputs: bool                   # the file defines inputs(rng, symbols)
    source: str                        # the kept statements, at their own lines
    constants: dict = field(default_factory=dict)   # module constants (frontend's fold)


def read_reference(path: Path, kernel_name: str | None = None,
                   overrides: dict | None = None) -> Reference:
    """`reference_<kernel>` when the file has one (several kernels), else `reference`;
    `overrides` replaces module constants as it does for the kernel (--const)."""
    from argus.frontend.errors import DSLError
    from argus.frontend.parse import _module_constants
    from argus.frontend.source_bounds import parse_tree, read_source

    try:
        text = read_source(Path(path))
        tree = parse_tree(text, str(path))
    except DSLError as err:
        raise UsageError(err.format()) from None
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    wanted = [f"reference_{kernel_name}"] if kernel_name else []
    fn = next((functions[n] for n in wanted + ["reference"] if n in functions), None)
    if fn is None:
        raise UsageError(f"{path}:1: defines no reference(...); add a NumPy function taking "
                         f"the kernel's input tensors by name and returning its output")
    if fn.decorator_list:
        raise UsageError(f"{path}:{fn.lineno}: {fn.name}(...) has a decorator; a reference is "
                         f"a plain NumPy function (decorators are not run)")
    if fn.args.vararg or fn.args.kwarg or fn.args.posonlyargs:
        raise UsageError(f"{path}:{fn.lineno}: {fn.name}(...) takes *args, **kwargs or "
                         f"positional-only parameters; name each input tensor instead")
    params = tuple(a.arg for a in fn.args.args)
    defaults = {}
    for arg, node in zip(fn.args.args[len(params) - len(fn.args.defaults):], fn.args.defaults):
        try:
            defaults[arg.arg] = ast.literal_eval(node)
        except (ValueError, SyntaxError, TypeError):
            defaults[arg.arg] = None
    inputs = functions.get("inputs")
    return Reference(
        path=Path(path), name=fn.name, line=fn.lineno, params=params, defaults=defaults,
        has_inputs=inputs is not None and not inputs.decorator_list,
        source=kept_source(tree, text),
        constants=_module_constants(tree, str(path), overrides))


def kept_source(tree: ast.Module, text: str) -> str:
    """The file's text with every statement but the kept ones blanked, line for line. A kept
    statement sharing a line with a dropped one (`import numpy; run()`) is dropped too."""
    keep = [stmt for stmt in tree.body if _kept(stmt)]
    dropped_lines = {line for stmt in tree.body if stmt not in keep for line in _lines(stmt)}
    changed = True
    while changed:   # to a fixed point: dropping a statement may expose a neighbour's line
        changed = False
        for stmt in list(keep):
            if dropped_lines & set(_lines(stmt)):
                keep.remove(stmt)
                dropped_lines |= set(_lines(stmt))
                changed = True
    kept_lines = {line for stmt in keep for line in _lines(stmt)}
    lines = text.splitlines()
    return "\n".join(line if i + 1 in kept_lines else "" for i, line in enumerate(lines)) + "\n"


def _lines(stmt: ast.stmt) -> range:
    return range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)


def _kept(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import):
        return all(_allowed(alias.name) for alias in stmt.names)
    if isinstance(stmt, ast.ImportFrom):
        return stmt.level == 0 and _allowed(stmt.module or "")
    return isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list


def _allowed(module: str) -> bool:
    return module.split(".")[0] in ALLOWED_IMPORTS
