"""Launch extents written as text over shape symbols ("M // 64"), evaluated safely."""

from __future__ import annotations

import ast
import operator

from .errors import InterpretError

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def eval_extent(text, symbols: dict[str, int], constants: dict) -> int:
    if isinstance(text, int):
        return text
    try:
        tree = ast.parse(str(text), mode="eval").body
    except SyntaxError:
        raise InterpretError(f"launch extent {text!r} is not an expression") from None

    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in symbols:
                return symbols[node.id]
            if node.id in constants:
                return constants[node.id]
            raise InterpretError(f"launch extent {text!r} uses {node.id!r}, which is neither "
                                 f"a shape symbol ({sorted(symbols)}) nor a constant")
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        raise InterpretError(f"launch extent {text!r}: only + - * // % over symbols allowed")

    return int(ev(tree))
