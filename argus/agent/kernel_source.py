"""A DSL kernel file read from its syntax tree, never executed: its @kernel functions, module
constants, const expressions, and the layout of its B operand.

The agent reads model-written kernels and the library's (argus/kernels/, LIBRARY_DIR) this
way: the coder step to recognise a library specialisation, the library space for the
knobs' defaults, the GPU evaluator and the profiler for a file's kernel names and B layout.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

LIBRARY_DIR = Path(__file__).resolve().parent.parent / "kernels"


def module_constants(tree: ast.Module) -> dict[str, Any]:
    """The top-level `NAME = literal` bindings."""
    out = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


def kernel_functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """The top-level functions under a decorator that names `kernel`, by name."""
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)
            and any("kernel" in ast.dump(d) for d in n.decorator_list)}


ARITH = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
         ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b}


def const_value(node: ast.expr, module: dict[str, Any]) -> Any:
    """A literal, a module constant, or +, -, *, // over those (`BM: const = 64 * WG`);
    evaluated on the tree, never executed. ValueError otherwise."""
    if isinstance(node, ast.Name) and node.id in module:
        return module[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in ARITH:
        left, right = const_value(node.left, module), const_value(node.right, module)
        if isinstance(left, int) and isinstance(right, int) and not (
                isinstance(node.op, ast.FloorDiv) and right == 0):
            return ARITH[type(node.op)](left, right)
        raise ValueError("not an integer expression")
    return ast.literal_eval(node)


def b_layout(source: str) -> str:
    """"nk" when the kernel declares its second tensor N x K (C = A @ B^T), else "kn".
    Read from the syntax tree (the file is not executed)."""
    try:
        fns = list(kernel_functions(ast.parse(source)).values())
    except SyntaxError:
        return "kn"
    if fns and len(fns[0].args.args) > 1:
        ann = fns[0].args.args[1].annotation
        if isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple) and ann.slice.elts:
            first = ann.slice.elts[0]
            if isinstance(first, ast.Constant) and first.value == "N":
                return "nk"
    return "kn"


def kernel_names(source: str) -> list[str]:
    """The @kernel function names of a source file (from its syntax tree)."""
    try:
        return list(kernel_functions(ast.parse(source)))
    except SyntaxError:
        return []
