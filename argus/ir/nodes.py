"""IR nodes: one op node kind for every instruction and region, plus the kernel around it.

An `Op` is `results = opcode(operands) {attrs} [regions]` with a source location. What an
opcode means (its family, operand kinds, contracts, effects) is data in `argus.ir.ops`.
Operands are SSA `Value`s or immediate Python numbers (folded compile-time constants).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Union

from .types import IRType


@dataclass(frozen=True)
class Loc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True, eq=False)
class Value:
    """An SSA value; identity is the object, the name is for printing and diagnostics."""
    name: str
    type: IRType

    def __repr__(self) -> str:
        return f"%{self.name}"


Operand = Union[Value, int, float]


@dataclass(eq=False)
class Block:
    """A straight-line list of ops; values bound by the region head are `args`."""
    ops: list["Op"] = field(default_factory=list)
    args: tuple[Value, ...] = ()


@dataclass(eq=False)
class Op:
    opcode: str
    operands: tuple[Operand, ...]
    results: tuple[Value, ...]
    attrs: dict[str, Any]
    loc: Loc
    regions: tuple[Block, ...] = ()

    @property
    def result(self) -> Value:
        if len(self.results) != 1:
            raise ValueError(f"{self.opcode} has {len(self.results)} results, not one")
        return self.results[0]


@dataclass(frozen=True)
class Role:
    """A warpgroup role: which warpgroups run it and their register budget (setmaxnreg)."""
    name: str
    warpgroups: tuple[int, ...]
    regs: int
    loc: Loc


@dataclass(frozen=True)
class Schedule:
    """A persistent tile schedule: the tile grid and the order blocks visit it in."""
    tiles: tuple[str, ...]    # extents, as expressions over the shape symbols
    order: str                # row_major | grouped | swizzled
    group: int                # group size for grouped/swizzled orders (1 for row_major)
    loc: Loc


@dataclass(frozen=True)
class Launch:
    grid: tuple[str, ...]     # each an int or an expression over shape symbols, as text
    block: int                # threads per block
    cluster: tuple[int, int, int]
    roles: tuple[Role, ...] = ()
    schedules: tuple[Schedule, ...] = ()


@dataclass(eq=False)
class Kernel:
    name: str
    params: tuple[Value, ...]          # global tensors and runtime scalars
    symbols: tuple[Value, ...]         # symbolic shape dimensions (index scalars)
    constants: dict[str, Any]          # compile-time constants, already folded
    launch: Launch
    body: Block
    loc: Loc

    def walk(self) -> Iterator[Op]:
        """Every op, in program order, entering regions."""
        yield from walk(self.body)

    @property
    def assumptions(self) -> list[Op]:
        return [op for op in self.walk() if op.opcode == "assume"]


def walk(block: Block) -> Iterator[Op]:
    for op in block.ops:
        yield op
        for region in op.regions:
            yield from walk(region)
