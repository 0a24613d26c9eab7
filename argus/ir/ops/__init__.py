"""The opcode table: every op family's specs, looked up by opcode."""

from __future__ import annotations

from . import arith, math, matrix, mbarrier, memory, scan, structure, sync, tag, tma, wgmma
from .spec import Contract, Operand, OpSpec

FAMILIES = (arith, structure, memory, mbarrier, tma, wgmma, matrix, sync, math, scan, tag)

OPS: dict[str, OpSpec] = {}
for _family in FAMILIES:
    for _spec in _family.SPECS:
        assert _spec.opcode not in OPS, _spec.opcode
        OPS[_spec.opcode] = _spec


def spec_of(opcode: str) -> OpSpec:
    try:
        return OPS[opcode]
    except KeyError:
        raise KeyError(f"unknown opcode {opcode!r}") from None


__all__ = ["Contract", "OPS", "OpSpec", "Operand", "spec_of"]
