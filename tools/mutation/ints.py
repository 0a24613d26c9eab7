"""Which names of a kernel hold integers (loop variables, block and warpgroup indices,
const parameters, shape symbols, and names assigned from integer expressions), so that
index-arithmetic operators leave value arithmetic (fragments, scores) alone."""

from __future__ import annotations

import ast

from tools.mutation.sites import call_name

INT_CALLS = {"block_id", "warpgroup_index"}


def int_names(fn: ast.FunctionDef, module_ints: set[str] = frozenset()) -> set[str]:
    names = set(module_ints)
    for a in fn.args.args:
        ann = a.annotation
        if isinstance(ann, ast.Name) and ann.id == "const":
            names.add(a.arg)
        for node in ast.walk(ann) if ann is not None else ():
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    node.value.isidentifier():
                names.add(node.value)
    for node in ast.walk(fn):
        if isinstance(node, ast.For):
            names |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    changed = True
    while changed:
        changed = False
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name) and node.targets[0].id not in names:
                if call_name(node.value) in INT_CALLS or is_int_expr(node.value, names):
                    names.add(node.targets[0].id)
                    changed = True
    return names


def is_int_expr(node: ast.AST, names: set[str]) -> bool:
    """No calls, no non-integer constants, and every name an integer name."""
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Call, ast.Subscript, ast.Attribute, ast.Compare, ast.BoolOp)):
            return False
        if isinstance(sub, ast.Constant) and (isinstance(sub.value, bool) or
                                              not isinstance(sub.value, int)):
            return False
        if isinstance(sub, ast.Name) and sub.id not in names:
            return False
    return True


def module_int_constants(tree: ast.Module) -> set[str]:
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and \
                isinstance(node.value.value, int) and not isinstance(node.value.value, bool):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out
