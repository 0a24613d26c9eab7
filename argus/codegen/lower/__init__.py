"""Lowering rules, one module per op family: `RULES[opcode](ctx, op)` emits C++ for one op."""

from . import (arith, elementwise, exchange, gather, indexed, matrix, mbarrier, memory, structure,
               sync, tma, wgmma)

RULES = {}
for _module in (arith, elementwise, exchange, gather, indexed, matrix, mbarrier, memory,
                structure, sync, tma, wgmma):
    RULES.update(_module.RULES)
