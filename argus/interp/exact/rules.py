"""The exact-mode rule overrides, by opcode (the evaluator falls back to ops.RULES)."""

from __future__ import annotations

from . import math, matrix, memory, scan, wgmma

EXACT_RULES: dict = {}
for _family in (math, memory, wgmma, matrix, scan):
    for _opcode, _rule in _family.RULES.items():
        assert _opcode not in EXACT_RULES, _opcode
        EXACT_RULES[_opcode] = _rule
