"""Translate the predicate of `tag_assert(...)` into a TagExpr over the op's operands.

Inside the predicate, `tag(x).field` is the tag field of each element of x, `coord(x)[i]`
each element's coordinate i, an index or predicate fragment (`row_of(s)`, a mask) stands for
its value at each element, `ids[...]` an entry of a 1-D int32 routing array, a kernel
tensor's name (`A`) the tensor itself, to compare with `tag(x).tensor`, and other
names are uniform scalars (loop variables, ids). The same translation serves
`assume(tag(x).field == ...)`, a tag assumption."""

from __future__ import annotations

import ast

from argus.ir.nodes import Value
from argus.ir.types import DType, FragmentType, GlobalTensorType, ScalarType
from argus.ir import tagexpr as T

OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
       ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class PredicateTranslator:
    def __init__(self, fx):
        self.fx = fx
        self.operands: list = []

    def _operand(self, value) -> int:
        for i, v in enumerate(self.operands):
            if v is value:
                return i
        self.operands.append(value)
        return len(self.operands) - 1

    def _storage(self, node: ast.AST) -> Value:
        value = self.fx.expr(node)
        if not isinstance(value, Value) or not hasattr(value.type, "shape"):
            raise self.fx.error(node, "tag() and coord() take a fragment or a tile",
                                "e.g. tag(out).row == coord(dst)[0]")
        return value

    def _call_name(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return node.func.id
        return None

    def _routing_array(self, node: ast.AST):
        """A kernel tensor of int32 indices named in a predicate (`ids` of `ids[p]`)."""
        if not isinstance(node, ast.Name):
            return None
        value = self.fx.expr(node)
        if isinstance(value, Value) and isinstance(value.type, GlobalTensorType):
            if len(value.type.shape) != 1 or value.type.dtype != DType.int32:
                raise self.fx.error(node, f"{node.id}[...] in a tag predicate reads a 1-D int32 "
                                    f"routing array; {node.id} is {value.type}",
                                    "index a routing array such as ids: Tensor[\"P\", int32]")
            return value
        return None

    def predicate(self, node: ast.AST) -> T.TagExpr:
        if not isinstance(node, (ast.Compare, ast.BoolOp)):
            raise self.fx.error(node, "tag_assert needs a comparison",
                                "e.g. tag_assert(tag(out).row == coord(dst)[0])")
        return self.translate(node)

    def translate(self, node: ast.AST) -> T.TagExpr:
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            parts = [self.translate(v) for v in node.values]
            out = parts[0]
            for p in parts[1:]:
                out = T.BinExpr(op, out, p)
            return out
        if isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise self.fx.error(node, "chained comparisons are not supported in tag_assert",
                                    "split into `a < b and b < c`")
            return T.BinExpr(OPS[type(node.ops[0])], self.translate(node.left),
                             self.translate(node.comparators[0]))
        if isinstance(node, ast.BinOp) and type(node.op) in OPS:
            return T.BinExpr(OPS[type(node.op)], self.translate(node.left),
                             self.translate(node.right))
        if isinstance(node, ast.Attribute) and self._call_name(node.value) == "tag":
            call = node.value
            if len(call.args) != 1:
                raise self.fx.error(call, "tag() takes one argument")
            return T.TagField(self._operand(self._storage(call.args[0])), node.attr)
        if isinstance(node, ast.Subscript) and self._call_name(node.value) == "coord":
            call = node.value
            if len(call.args) != 1:
                raise self.fx.error(call, "coord() takes one argument")
            axis = self.fx.expr(node.slice)
            storage = self._storage(call.args[0])
            if not isinstance(axis, int) or not 0 <= axis < len(storage.type.shape):
                raise self.fx.error(node.slice, f"coord axis must be a constant in "
                                    f"0..{len(storage.type.shape) - 1}")
            return T.CoordOf(self._operand(storage), axis)
        if isinstance(node, ast.Subscript) and self._routing_array(node.value) is not None:
            return T.Lookup(self._operand(self._routing_array(node.value)),
                            self.translate(node.slice))
        if self._call_name(node) in ("tag", "coord"):
            raise self.fx.error(node, f"use {self._call_name(node)}(x) with a field or index",
                                "tag(x).row, coord(x)[0]")
        value = self.fx.expr(node)
        if isinstance(value, Value) and isinstance(value.type, GlobalTensorType):
            # a kernel tensor named as a value: the tensor itself, compared with
            # tag(x).tensor (the tensor x was loaded from)
            return T.ScalarRef(self._operand(value))
        if isinstance(value, Value) and isinstance(value.type, FragmentType) and \
                value.type.dtype in (DType.pred, DType.int32):
            return T.ValueOf(self._operand(value))
        scalar = isinstance(value, Value) and isinstance(value.type, ScalarType)
        if isinstance(value, bool) or not (isinstance(value, int) or scalar):
            raise self.fx.error(node, f"tag_assert cannot use {ast.unparse(node)!r} here",
                                "compare tag(x).field and coord(x)[axis] with integers, "
                                "uniform scalars (loop variables, ids) and index or "
                                "predicate fragments (row_of(x), a mask); tag(x).tensor "
                                "with a kernel tensor (tag(b).tensor == B)")
        if isinstance(value, int):
            return T.Const(value)
        return T.ScalarRef(self._operand(value))
