"""Interpreter rules, one module per op family: opcode -> rule(agent, op, args).

`args` holds the operands' values in the op table's order; a rule reads them by the
table's names, `op.arg("dst", args)`, `op.args("coords", args)` (the rules of whole
families, arithmetic and elementwise math, take them all in order).

A rule is a generator: it yields machine instructions (scheduling points) and returns
the op's result. `KNOWN_MISSING` lists opcodes of the op table with no rule yet, so a
test can fail when a new opcode appears without either.
"""

from __future__ import annotations

from . import (arith, indexed, math, matrix, mbarrier, memory, scan, structure, sync, tag,
               tma, wgmma)

FAMILIES = (arith, structure, memory, indexed, mbarrier, tma, wgmma, matrix, sync, math, scan,
            tag)

RULES: dict = {}
for _family in FAMILIES:
    for _opcode, _rule in _family.RULES.items():
        assert _opcode not in RULES, _opcode
        RULES[_opcode] = _rule

KNOWN_MISSING: frozenset = frozenset()
