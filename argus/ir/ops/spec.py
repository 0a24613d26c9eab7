"""The one interface every opcode declares: operands, results, regions, effects, contracts.

Ops are data here so that the checker, the printer, the verifier, the interpreter and the
code generator all read the same description instead of each keeping a private copy.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Operand:
    name: str
    kinds: tuple[str, ...]       # names of IR type classes, or "imm" for an immediate
    optional: bool = False
    variadic: bool = False       # takes all remaining operands


@dataclass(frozen=True)
class Contract:
    """A relation an op requires of its inputs, discharged by the verifier."""
    name: str
    relation: str


@dataclass(frozen=True)
class OpSpec:
    opcode: str
    family: str
    operands: tuple[Operand, ...] = ()
    results: int = 0
    regions: int = 0
    region_args: int = 0         # values each region binds (loop variable, tile coords)
    reads: tuple[str, ...] = ()  # operand names whose memory this op reads
    writes: tuple[str, ...] = () # operand names whose memory this op writes
    asynchronous: bool = False   # completes later, through an mbarrier or a wait
    contracts: tuple[Contract, ...] = ()
    doc: str = ""


SCALAR = ("ScalarType", "imm")
FRAG = ("FragmentType",)
STILE = ("SmemTileType",)
GTILE = ("GlobalTileType",)
BAR = ("BarrierType",)


def op(opcode: str, family: str, *operands: Operand, **kw) -> OpSpec:
    return OpSpec(opcode, family, tuple(operands), **kw)


def arg(name: str, *kinds: str, optional: bool = False, variadic: bool = False) -> Operand:
    return Operand(name, kinds, optional, variadic)
