"""Swizzle alignment of shared-memory sub-tiles (symbolic, z3): a tile cut out of a
swizzled stage must start on a swizzle atom row boundary (8 rows) and a 16-byte chunk,
or the XOR pattern the hardware applies to absolute address bits no longer matches the
one TMA wrote (SW128 needs 1024-byte aligned atoms; see argus/layout/hopper/smem.py)."""

from __future__ import annotations

import z3

from argus.layout import symbolic as sym
from argus.layout.hopper.smem import ATOM_ROWS, SWIZZLE_SPAN_BYTES

from . import smt
from .report import counterexample, finding


def check(m) -> list:
    out = []
    for e in m.opcode("smem.tile"):
        ref = m.smem.get(e.op.result)
        t = e.op.result.type
        if ref is None or t.swizzle == "none" or len(ref.origin) != 2:
            continue
        elem = t.dtype.bits // 8
        row, col = ref.origin
        bad_row = _not_multiple(row, ATOM_ROWS)
        bad_col = _not_multiple(sym.mul(smt.as_term(col), elem) if sym.is_symbolic(col)
                                else col * elem, 16)
        violation = z3.Or(smt.bool_of(bad_row) if not isinstance(bad_row, bool) else bad_row,
                          smt.bool_of(bad_col) if not isinstance(bad_col, bool) else bad_col)
        if z3.is_false(z3.simplify(violation)):
            continue
        found = smt.find(m.constraints + list(e.where.conds), violation,
                         [l.counter for l in e.where.loops],
                         prefer=m.first_iteration(e.where))
        if found is None:
            continue
        r, c = smt.value(found, row), smt.value(found, col)
        span = SWIZZLE_SPAN_BYTES[t.swizzle]
        out.append(finding(
            "protocol.swizzle-alignment", e.op,
            f"this {t.shape[0]}x{t.shape[1]} tile of {t.buffer} starts at element ({r}, {c}), "
            f"not on a {t.swizzle} swizzle atom ({ATOM_ROWS} rows of {span} B, 16-byte "
            "chunks): its addresses no longer follow the swizzle TMA wrote",
            f"cut tiles at multiples of {ATOM_ROWS} rows and {16 // elem} columns",
            counterexample(m, found, e.where)))
    return out


def _not_multiple(x, k):
    if not sym.is_symbolic(x):
        return x % k != 0
    return z3.Not(smt.eq(sym.umod(smt.as_term(x), k), 0))
