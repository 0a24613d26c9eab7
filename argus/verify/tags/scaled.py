"""The softmax scale folded into the exponent (FA3: p = exp2(x * c - m * c), one FMA an
element, the row max taken on the raw scores): a score tile, its row max and the gap
between two maxima, each multiplied by a positive constant c.

For c > 0, c * x keeps the order of the scores, so the max of the scaled tile is c times
the max of the tile, and -inf (a masked key) stays -inf. The scaled tile is then a Series
of its own, made once per (tile, c) (a statistic is of one Series: identity matters), and
a max Stat or a Gap of the tile maps to the same Stat or Gap of the scaled one; the
softmax rules (softmax.py, rescale.py) check the rest over the scaled Series as they do
for a tile scaled before its max. A factor that is not a positive constant (a negative
scale reverses the max, a runtime scalar is not known) gives no meaning: the core rule
follows the tags and the softmax that uses it is not proved."""

from __future__ import annotations

import math
from dataclasses import replace

from argus.ir.nodes import Op

from .meaning import Gap, Series, Stat, resolve, state
from .softmax import is_rows, is_tile, meaning, rows_frag, tile_frag


def positive(c) -> bool:
    """A compile-time number c with 0 < c < inf."""
    return isinstance(c, (int, float)) and not isinstance(c, bool) and 0 < c < math.inf


def mul(w, op: Op, args) -> bool:
    """x * c or c * x for a score tile, a row max or a gap of maxima x: the same value of the
    tile scaled by c. False (no meaning) for anything else."""
    a, b = args
    c, x = (b, a) if positive(b) else ((a, b) if positive(a) else (None, None))
    if c is None:
        return False
    m = meaning(x)
    if is_tile(x) and isinstance(m, Series):
        w.env[op.result] = tile_frag(op, x, scaled_series(w, m, c), x.tag.contributions)
        return True
    if is_rows(x) and isinstance(m, Stat) and m.kind == "max":
        stat = scaled_stat(w, m, c, op)
        if stat is not None:
            w.env[op.result] = rows_frag(w, op, stat, stat.row)
            return True
    if is_rows(x) and isinstance(m, Gap):
        src, dst = scaled_stat(w, m.src, c, op), scaled_stat(w, m.dst, c, op)
        if src is not None and dst is not None:
            w.env[op.result] = rows_frag(w, op, Gap(src, dst), dst.row)
            return True
    return False


def scaled_series(w, series: Series, c) -> Series:
    """The Series of `series` times c (the same blocks, tags, mask and real rows)."""
    memo = state(w).scaled
    key = (id(series), c)
    if key not in memo:
        memo[key] = (series, replace(series, name=f"{series.name} * {c:g}",
                                     recipe=("math.mul", repr(c), series.recipe)))
    return memo[key][1]


def scaled_stat(w, stat: Stat, c, op: Op) -> Stat | None:
    """The max of the scaled tile over the same blocks and row: c times `stat`; None while
    the statistic's tile is not known yet (a loop-carried max before its first use)."""
    series = resolve(stat.series)
    if not isinstance(series, Series):
        return None
    return Stat("max", scaled_series(w, series, c), stat.span, resolve(stat.row), None,
                op.loc)
