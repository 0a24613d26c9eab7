"""IR builder: emits ops into the current block, names values, opens regions."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from argus.ir.nodes import Block, Loc, Op, Operand, Value
from argus.ir.types import IRType


class Builder:
    def __init__(self):
        self.root = Block()
        self._blocks = [self.root]
        self._names: set[str] = set()
        self._temp = 0
        self.defining: dict[int, str] = {}    # id(value) -> opcode of the op that made it

    def fresh(self, hint: str | None, type_: IRType) -> Value:
        if hint is None:
            name = str(self._temp)
            self._temp += 1
        else:
            name, i = hint, 1
            while name in self._names:
                name = f"{hint}.{i}"
                i += 1
        self._names.add(name)
        return Value(name, type_)

    def emit(self, opcode: str, operands: tuple[Operand, ...], loc: Loc,
             result: IRType | None = None, attrs: dict[str, Any] | None = None,
             name: str | None = None, regions: tuple[Block, ...] = ()) -> Op:
        results = (self.fresh(name, result),) if result is not None else ()
        op = Op(opcode, tuple(operands), results, dict(attrs or {}), loc, regions)
        self._blocks[-1].ops.append(op)
        for r in results:
            self.defining[id(r)] = opcode
        return op

    @property
    def current(self) -> Block:
        """The block ops are emitted into now."""
        return self._blocks[-1]

    @contextmanager
    def region(self, block: Block) -> Iterator[Block]:
        self._blocks.append(block)
        try:
            yield block
        finally:
            self._blocks.pop()

    def rename(self, value: Value, name: str) -> Value:
        """Give the last-emitted result a user name (for `x = expr`)."""
        op = self._blocks[-1].ops[-1] if self._blocks[-1].ops else None
        if op is None or value not in op.results or not value.name.isdigit():
            return value
        self._names.discard(value.name)
        fresh = self.fresh(name, value.type)
        op.results = tuple(fresh if r is value else r for r in op.results)
        self.defining[id(fresh)] = op.opcode
        return fresh
