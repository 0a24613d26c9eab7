"""The Hopper instruction atoms: wgmma fragments, ldmatrix/stmatrix, smem operands,
the matrix descriptor and TMA boxes, with a registry of the thread-value atoms by name."""

from __future__ import annotations

from typing import Callable

from .descriptor import (DescriptorError, MatrixDescriptor, descriptor_for, instruction_k,
                         read_layout)
from .ldmatrix import ldmatrix, matrix_fragment, row_address_lane, stmatrix
from .smem import SmemLayoutError, SmemOperand, smem_operand
from .tma import TmaBox, TmaError
from .tv import TVLayout, TVLayoutError
from .wgmma import (ACCUMULATOR_NS, accumulator_name, accumulator_slice_is_register_a,
                    wgmma_a_registers, wgmma_accumulator)


def _registry() -> dict[str, Callable[[], TVLayout]]:
    atoms: dict[str, Callable[[], TVLayout]] = {}
    for n in ACCUMULATOR_NS:
        atoms[accumulator_name(n)] = lambda n=n: wgmma_accumulator(n)
    atoms["wgmma_a_rs_16bit"] = lambda: wgmma_a_registers(2)
    atoms["wgmma_a_rs_8bit"] = lambda: wgmma_a_registers(1)
    for op, build in (("ldmatrix", ldmatrix), ("stmatrix", stmatrix)):
        for num in (1, 2, 4):
            for trans in (False, True):
                name = f"{op}_x{num}" + ("_trans" if trans else "")
                atoms[name] = lambda build=build, num=num, trans=trans: build(num, trans)
    return atoms


_ATOMS = _registry()


def atom_names() -> list[str]:
    """Every registered thread-value atom, in a stable order."""
    return list(_ATOMS)


def get_atom(name: str) -> TVLayout:
    try:
        return _ATOMS[name]()
    except KeyError:
        raise TVLayoutError(f"unknown atom {name!r}; known atoms: wgmma_acc_m64n<8..256>, "
                            "wgmma_a_rs_16bit, wgmma_a_rs_8bit, ldmatrix_x<1|2|4>[_trans], "
                            "stmatrix_x<1|2|4>[_trans]") from None


__all__ = [
    "ACCUMULATOR_NS", "DescriptorError", "MatrixDescriptor", "SmemLayoutError", "SmemOperand",
    "TVLayout", "TVLayoutError", "TmaBox", "TmaError", "accumulator_slice_is_register_a",
    "atom_names", "descriptor_for", "get_atom", "instruction_k", "ldmatrix", "matrix_fragment",
    "read_layout", "row_address_lane", "smem_operand", "stmatrix", "wgmma_a_registers",
    "wgmma_accumulator",
]
