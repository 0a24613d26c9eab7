"""Shared-memory bank conflicts of ldmatrix/stmatrix (a warning with its cost).

An 8x8 matrix of 16-bit elements is one shared-memory phase: 8 lanes each address one
16-byte row. The 32 banks are 4 bytes wide, so the phase is conflict-free when the 8 rows
fall in 8 different 16-byte chunks of the 128-byte bank window; k rows in one chunk
serialise into k wavefronts. Addresses are the stage's row-major bytes through the
buffer's swizzle (argus.layout.swizzle), computed exactly for the 8 rows.
"""

from __future__ import annotations

from collections import Counter

from argus.layout.swizzle import hopper_swizzle

from .report import finding, first_run


def _ways(row_bytes: int, swizzle: str, row0: int, col_byte: int) -> int:
    sw = hopper_swizzle(swizzle)
    chunks = Counter((sw((row0 + r) * row_bytes + col_byte) // 16) % 8 for r in range(8))
    return max(chunks.values())


SMEM_OPERAND = {"ldmatrix": "src", "stmatrix": "dst"}    # the shared-memory side


def check(m) -> list:
    out = []
    for e in m.opcode("ldmatrix", "stmatrix"):
        ref = m.smem.get(e.op.arg(SMEM_OPERAND[e.op.opcode]))
        if ref is None:
            continue
        buf = ref.buffer.type
        elem = buf.dtype.bits // 8
        row_bytes = buf.shape[-1] * elem
        row0 = ref.origin[0] if ref.origin and isinstance(ref.origin[0], int) else 0
        col0 = ref.origin[1] if len(ref.origin) > 1 and isinstance(ref.origin[1], int) else 0
        tile_cols = ref.shape[-1] if ref.shape else buf.shape[-1]
        worst = max(_ways(row_bytes, buf.swizzle, row0, (col0 + c) * elem)
                    for c in range(0, max(8, tile_cols), 8))
        if worst > 1:
            out.append(finding(
                "protocol.bank-conflict", e.op,
                f"{e.op.opcode} on {ref.buffer.name} ({buf.shape[-1]} {buf.dtype} per row, "
                f"swizzle {buf.swizzle}): the 8 rows of a matrix hit {worst}-way bank "
                f"conflicts, {worst} shared-memory wavefronts per 8x8 matrix instead of 1",
                "use swizzle=\"128B\" (or the swizzle whose span equals the row bytes) for "
                "this buffer", first_run(m, e.op), severity="warning"))
    return out
