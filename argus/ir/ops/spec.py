"""The one interface every opcode declares: operands, results, regions, effects, contracts.

Ops are data here so that the checker, the printer, the verifier, the interpreter and the
code generator all read the same description instead of each keeping a private copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


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
    # the rest of the op's effects: the proxy its shared-memory accesses go through
    # ("generic" for ld/st.shared, "async" for TMA and wgmma), what completes an asynchronous
    # op ("mbarrier:<operand>" when it signals that barrier, or the opcode that waits for
    # it), and whether it only names memory (a view: tile, segment, tags), touching none
    proxy: str = "generic"
    completes: str = ""
    view: bool = False
    # the mbarrier operand every executing thread arrives on once per execution (arrive,
    # expect_tx, and the cp.async gather, whose arrival comes when the thread's copies have
    # landed): what the protocol pass counts against mbarrier_init's arrival count. An op
    # that completes on a barrier (completes="mbarrier:bar") without arriving on it
    # completes transaction bytes instead (TMA).
    arrives: str = ""
    # "warpgroup": every thread of the warpgroup executes the op together (refused inside
    # elect_one); "" for ops one thread may issue alone
    collective: str = ""
    contracts: tuple[Contract, ...] = ()
    doc: str = ""
    # Executable parts, for the elementwise families (one definition every stage reads):
    # `semantics` computes the op on fp32 NumPy arrays (or Python scalars): the interpreter
    # (both modes) and constant folding call it; `cuda` is the C expression of one element,
    # a template over the operand names (`"argus::exp2f({x})"`, `"({lhs}) + ({rhs})"`) that
    # the code generator fills per register, calling the tiny wrappers of
    # argus/codegen/include/argus_math.cuh.
    semantics: Callable[..., Any] | None = None
    cuda: str | None = None
    # the op is also defined on int32 operands (semantics exact on integers, and the cuda
    # template compiles for int); other elementwise ops take float operands only
    integer: bool = False

    def operand_index(self, name: str) -> int:
        """Position of the operand called `name` (variadic ones: the first position)."""
        for i, o in enumerate(self.operands):
            if o.name == name:
                return i
        raise KeyError(f"{self.opcode} has no operand {name!r}; it has "
                       f"{[o.name for o in self.operands]}")


SCALAR = ("ScalarType", "imm")
FRAG = ("FragmentType",)
STILE = ("SmemTileType",)
GTILE = ("GlobalTileType",)
BAR = ("BarrierType",)


def op(opcode: str, family: str, *operands: Operand, **kw) -> OpSpec:
    return OpSpec(opcode, family, tuple(operands), **kw)


def arg(name: str, *kinds: str, optional: bool = False, variadic: bool = False) -> Operand:
    return Operand(name, kinds, optional, variadic)
