"""Where operators may edit: the kernel function's body, outside tag_assert/assume (an edit
there changes the specification, not the kernel), and how a replacement is spelt."""

from __future__ import annotations

import ast
from typing import Iterator

SPEC_CALLS = {"tag_assert", "assume"}


def kernel_function(tree: ast.Module, name: str) -> ast.FunctionDef:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise KeyError(f"no function {name!r} in the module")


def call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name):
            return f.id
        if isinstance(f, ast.Attribute):
            return f.attr
    return None


def body_nodes(fn: ast.FunctionDef) -> Iterator[ast.AST]:
    """Every node of the body (not the signature), skipping specification calls."""
    stack = list(reversed(fn.body))
    while stack:
        node = stack.pop()
        if call_name(node) in SPEC_CALLS:
            continue
        yield node
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def calls(fn: ast.FunctionDef, *names: str) -> Iterator[ast.Call]:
    for node in body_nodes(fn):
        if isinstance(node, ast.Call) and call_name(node) in names:
            yield node


def statements(fn: ast.FunctionDef) -> Iterator[ast.stmt]:
    for node in body_nodes(fn):
        if isinstance(node, ast.stmt):
            yield node


def text(node: ast.AST) -> str:
    """`node` as source, parenthesised unless it is atomic (safe in any context)."""
    out = ast.unparse(node)
    atomic = (ast.Name, ast.Constant, ast.Call, ast.Subscript, ast.Attribute, ast.Tuple)
    return out if isinstance(node, atomic) else f"({out})"


def plus(node: ast.expr, delta: int) -> ast.expr:
    """node + delta (node - |delta|), a fresh tree."""
    op = ast.Add() if delta > 0 else ast.Sub()
    return ast.BinOp(left=node, op=op, right=ast.Constant(abs(delta)))


def loop_vars(fn: ast.FunctionDef) -> dict[int, str]:
    """For each node id, the name of the innermost single-variable `for` loop around it."""
    out: dict[int, str] = {}

    def walk(node: ast.AST, var: str | None) -> None:
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            var = node.target.id
        if var is not None:
            out[id(node)] = var
        for child in ast.iter_child_nodes(node):
            walk(child, var)

    for stmt in fn.body:
        walk(stmt, None)
    return out
