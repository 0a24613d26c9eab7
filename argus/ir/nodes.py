"""IR nodes: one op node kind for every instruction and region, plus the kernel around it.

An `Op` is `results = opcode(operands) {attrs} [regions]` with a source location. What an
opcode means (its family, operand kinds, contracts, effects) is data in `argus.ir.ops`.
Operands are SSA `Value`s or immediate Python numbers (folded compile-time constants).
Passes read them by the names the op table gives them (`op.arg("bar")`,
`op.args("coords")`), never by position: the table is the one place that knows positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence, Union

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

    @property
    def source_name(self) -> str:
        """The DSL name this value was bound to: `k.1` (the second `k`) is `k`."""
        head, _, tail = self.name.rpartition(".")
        return head if head and tail.isdigit() else self.name


Operand = Union[Value, int, float]


@dataclass(eq=False)
class Block:
    """A straight-line list of ops; values bound by the region head are `args`."""
    ops: list["Op"] = field(default_factory=list)
    args: tuple[Value, ...] = ()


class OperandNameError(LookupError):
    """An operand name the op table does not give the opcode, or `arg` asked of a variadic
    operand (`args` of a single one). Not a KeyError: a pass asking for a wrong name is a
    bug in the pass, never a fact about the kernel."""


# The op table's operand positions, filled on first use of each (opcode, name):
_ARG: dict[tuple[str, str], int] = {}        # single operands (optional ones too)
_ARGS: dict[tuple[str, str], int] = {}       # variadic ones: their first position
_OPTIONAL: set[tuple[str, str]] = set()


def _position(opcode: str, name: str, variadic: bool) -> int:
    from .ops import OPS    # the op table imports nothing of this module; import it late

    spec = OPS.get(opcode)
    if spec is None:
        raise OperandNameError(f"unknown opcode {opcode!r} (asked for its operand {name!r})")
    try:
        i = spec.operand_index(name)
    except KeyError:
        raise OperandNameError(f"{opcode} has no operand {name!r}; the op table names "
                               f"{[o.name for o in spec.operands]}") from None
    if any(o.optional or o.variadic for o in spec.operands[:i]):
        raise OperandNameError(f"{opcode}: operand {name!r} follows an optional or variadic "
                               "one, so it has no fixed position")
    o = spec.operands[i]
    if o.variadic != variadic:
        raise OperandNameError(
            f"{opcode}'s operand {name!r} is variadic; read it with args({name!r})"
            if o.variadic else
            f"{opcode}'s operand {name!r} is a single one; read it with arg({name!r})")
    if variadic:
        _ARGS[opcode, name] = i
    else:
        _ARG[opcode, name] = i
        if o.optional:
            _OPTIONAL.add((opcode, name))
    return i


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

    def arg(self, name: str, values: Sequence | None = None) -> Any:
        """The operand the op table calls `name`; None for an optional one left out.
        With `values`, one entry per operand in order (the interpreter's evaluated
        operands), the entry standing for that operand."""
        i = _ARG.get((self.opcode, name))
        if i is None:
            i = _position(self.opcode, name, False)
        given = self.operands if values is None else values
        if i < len(given):
            return given[i]
        if (self.opcode, name) in _OPTIONAL:
            return None
        raise IndexError(f"{self.loc}: {self.opcode} has {len(given)} operand(s), "
                         f"so no {name!r} (operand {i} in the op table)")

    def args(self, name: str, values: Sequence | None = None) -> Sequence:
        """The operands a variadic operand `name` took: all from its position on (with
        `values`, the entries of `values` standing for them)."""
        i = _ARGS.get((self.opcode, name))
        if i is None:
            i = _position(self.opcode, name, True)
        return (self.operands if values is None else values)[i:]


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


BLOCK_ORDERS = ("forward", "reversed")   # Launch.block_order


@dataclass(frozen=True)
class Launch:
    grid: tuple[str, ...]     # each an int or an expression over shape symbols, as text
    block: int                # threads per block
    cluster: tuple[int, int, int]
    roles: tuple[Role, ...] = ()
    schedules: tuple[Schedule, ...] = ()
    blocks_per_sm: int = 1    # resident blocks an SM is meant to hold: each gets 1/n of its
                              # registers (setmaxnreg's pool) and shares its shared memory
    block_order: str = "forward"  # "reversed": the block the hardware launches first has the
                              # last ids on every grid axis (the same set of blocks, so nothing
                              # but the launch order changes: the longest tiles first)


@dataclass(eq=False)
class Kernel:
    name: str
    params: tuple[Value, ...]          # global tensors and runtime scalars
    symbols: tuple[Value, ...]         # symbolic shape dimensions (index scalars)
    constants: dict[str, Any]          # compile-time constants, already folded
    launch: Launch
    body: Block
    loc: Loc
    # the launch arguments in order, by name: the parameters and the size parameters
    # (`SQ: Dim`: shape symbols given as ints); () when they are the parameters alone
    arguments: tuple[str, ...] = ()

    @property
    def size_params(self) -> tuple[str, ...]:
        """The shape symbols given as int launch arguments, in order."""
        names = {s.name for s in self.symbols}
        return tuple(a for a in self.arguments if a in names)

    @property
    def argument_names(self) -> tuple[str, ...]:
        """Every launch argument by name, in order."""
        return self.arguments or tuple(p.name for p in self.params)

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
