"""Entry points: kernel source -> checked IR. The module is parsed, never imported, so
parsing a file runs none of its code."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

from argus.ir.check import check_kernel
from argus.ir.nodes import Kernel, Loc
from argus.ir.ops.arith import SEMANTICS

from .barrier_checks import check_barriers
from .errors import DSLError
from .header import kernel_decorator
from .source_bounds import parse_tree, read_source
from .helpers import ModuleFunctions, read_module
from .visitor import SURFACE, KernelVisitor


def _module_constants(tree: ast.Module, filename: str,
                      overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Top-level `NAME = literal` (or a fold of earlier constants) bindings; an overridden
    name takes its override where it is bound, so the constants folded from it follow
    (`SCALE = 1 / HD ** 0.5` with HD overridden)."""
    consts: dict[str, Any] = {}
    overrides = overrides or {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)):
            continue
        if stmt.targets[0].id in overrides:
            consts[stmt.targets[0].id] = overrides[stmt.targets[0].id]
            continue
        try:
            expr = ast.Expression(_Substitute(consts).visit(stmt.value))
            value = ast.literal_eval(expr.body)
        except (ValueError, SyntaxError, TypeError, KeyError, RecursionError):
            continue
        if isinstance(value, (int, float, str, tuple)):
            consts[stmt.targets[0].id] = value
    return consts


def _pow(a, b):
    if not isinstance(b, (int, float)) or abs(b) > 64:
        raise ValueError("exponent too large for a compile-time constant")
    return a ** b


class _Substitute(ast.NodeTransformer):
    """Replaces known constant names and folds + - * // on literals, for literal_eval."""

    def __init__(self, consts):
        self.consts = consts

    def visit_Name(self, node):
        if node.id in self.consts:
            return ast.Constant(self.consts[node.id])
        raise KeyError(node.id)

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant):
            fn = _FOLDS.get(type(node.op))
            if fn is not None:
                return ast.Constant(fn(node.left.value, node.right.value))
        return node


# + - * // fold through the op table's semantics (argus/ir/ops/arith.py); / and ** are not
# scalar ops of a kernel, only of its module constants (`SCALE = 1 / HD ** 0.5`)
_FOLDS = {ast.Add: SEMANTICS["add"], ast.Sub: SEMANTICS["sub"], ast.Mult: SEMANTICS["mul"],
          ast.FloorDiv: SEMANTICS["floordiv"], ast.Div: lambda a, b: a / b, ast.Pow: _pow}


def parse_source(source: str, filename: str = "<string>",
                 overrides: dict[str, Any] | None = None) -> dict[str, Kernel]:
    """Every @kernel function in `source`, as checked IR, by name. `overrides` replaces
    module constants and const-parameter defaults (a library kernel's specialisation)."""
    tree = parse_tree(source, filename)
    lines = source.splitlines()
    module = _module_constants(tree, filename, overrides)
    consts = dict(module)
    consts.update(overrides or {})
    # helpers see the module's constants (specialised by the overrides), not a kernel's
    # const parameters or shape symbols: what they need of those is passed to them
    functions = read_module(tree, filename, lines, {k: consts[k] for k in module}, SURFACE)
    kernels: dict[str, Kernel] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and kernel_decorator(node) is not None \
                and node.name not in functions.helpers:
            kernels[node.name] = compile_function(node, filename, lines, consts, overrides,
                                                  functions)
    return kernels


def compile_function(fn: ast.FunctionDef, filename: str, lines: list[str],
                     consts: dict[str, Any], overrides: dict[str, Any] | None = None,
                     functions: ModuleFunctions | None = None) -> Kernel:
    try:
        visitor = KernelVisitor(fn, filename, lines, consts, functions)
        visitor.overrides = dict(overrides or {})
        kernel = visitor.kernel()
    except RecursionError:   # the source bounds keep this from happening; if not, say so
        raise DSLError("expression nested too deeply", Loc(filename, fn.lineno, 1),
                       "split it into named steps", lines[fn.lineno - 1]) from None
    check_barriers(kernel, lines)
    return check_kernel(kernel)


def parse_file(path: str | Path, overrides: dict[str, Any] | None = None) -> dict[str, Kernel]:
    path = Path(path)
    return parse_source(read_source(path), str(path), overrides)


def parse_kernel(path: str | Path, name: str) -> Kernel:
    kernels = parse_file(path)
    if name not in kernels:
        known = ", ".join(kernels) or "none"
        raise DSLError(f"no kernel named {name!r} in {path}", Loc(str(path), 1, 1),
                       f"kernels defined there: {known}")
    return kernels[name]


def parse_kernel_function(fn) -> Kernel:
    """The IR of a function decorated with @kernel, parsed from its file's source."""
    path = inspect.getsourcefile(fn)
    return parse_kernel(path, fn.__name__)
