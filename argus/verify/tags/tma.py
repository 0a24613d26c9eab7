"""TMA loads: each one is recorded as the writer of the shared-memory stage it fills.

The smem image of a box is the repository's model (argus.layout.hopper.TmaBox): dense,
dim 0 (the last tensor axis) fastest, the buffer's swizzle applied to the byte address,
relative to a stage base that is aligned to the swizzle pattern."""

from __future__ import annotations

from argus.ir.nodes import Op
from argus.layout.hopper import TmaBox, TmaError

from .values import Barrier, GlobalTile, SmemView, Writer


def tma_load(w, op: Op) -> None:
    dst, src, bar = (w.value(o) for o in op.operands[:3])
    if len(op.operands) > 3:
        w.not_modelled(op, "multicast TMA loads")
        return
    if not (isinstance(dst, SmemView) and isinstance(src, GlobalTile) and isinstance(bar, Barrier)):
        w.not_modelled(op, "a TMA load whose stage, tile or barrier is not known")
        return
    if w.phase == "collect":
        w.writers.append(Writer(dst, src, bar, w.scope_vars(), op.loc))


def box_image(view: SmemView) -> TmaBox | None:
    """The TMA box that fills `view` (rows x cols), or None when the hardware refuses it
    (the resources pass reports illegal boxes)."""
    rows, cols = view.shape
    eb = view.buffer.element_bytes
    try:
        return TmaBox(eb, (cols, rows), (eb, cols * eb), (cols, rows), view.buffer.swizzle)
    except TmaError:
        return None
