"""A thread-value layout as C: each register's (row, col) split into a per-thread part and a
per-register constant, so unrolled epilogues address with additions only."""

from __future__ import annotations

from dataclasses import dataclass

from argus.layout.hopper import get_atom
from argus.layout.int_tuple import flatten

from .errors import CodegenError


@dataclass(frozen=True)
class Mode:
    extent: int
    row_stride: int
    col_stride: int


@dataclass(frozen=True)
class SplitLayout:
    """row(t, v) = sum of the modes' row parts; likewise col. Modes are colexicographic."""
    name: str
    rows: int
    cols: int
    threads: int
    values: int
    thread_modes: tuple[Mode, ...]
    value_modes: tuple[Mode, ...]

    def thread_row_col(self, t: str) -> tuple[str, str]:
        """C expressions of the thread's row and column offsets."""
        row, col, div = [], [], 1
        for m in self.thread_modes:
            digit = f"(({t} / {div}) % {m.extent})" if div > 1 else f"({t} % {m.extent})"
            if m.row_stride:
                row.append(f"{digit} * {m.row_stride}")
            if m.col_stride:
                col.append(f"{digit} * {m.col_stride}")
            div *= m.extent
        return " + ".join(row) or "0", " + ".join(col) or "0"

    def value_row_col(self, v: int) -> tuple[int, int]:
        row = col = 0
        for m in self.value_modes:
            digit = v % m.extent
            v //= m.extent
            row += digit * m.row_stride
            col += digit * m.col_stride
        return row, col

    def pairs_adjacent(self) -> bool:
        """Register 2j+1 holds the column right of register 2j (packed 32-bit stores)."""
        first = self.value_modes[0] if self.value_modes else None
        return first is not None and first.extent == 2 and (first.row_stride, first.col_stride) == (0, 1)


def split_layout(name: str) -> SplitLayout:
    tv = get_atom(name)
    rows, cols = tv.tile

    def modes(sub):
        out = []
        for e, s in zip(flatten(sub.shape), flatten(sub.stride)):
            if e == 1:
                continue
            if s % rows == 0:
                out.append(Mode(e, 0, s // rows))
            else:
                out.append(Mode(e, s, 0))
        return tuple(out)

    split = SplitLayout(name, rows, cols, tv.threads, tv.values, modes(tv.layout[0]),
                        modes(tv.layout[1]))
    max_row = sum((m.extent - 1) * m.row_stride for m in split.thread_modes + split.value_modes)
    if max_row >= rows:
        raise CodegenError(f"layout {name} does not split into row and column parts; the "
                           "backend cannot address it by additions")
    row_of, col_of = tv.coord_table()
    for t in range(tv.threads):
        for v in range(tv.values):
            r = c = 0
            div = 1
            for m in split.thread_modes:
                d = (t // div) % m.extent
                div *= m.extent
                r += d * m.row_stride
                c += d * m.col_stride
            vr, vc = split.value_row_col(v)
            if (r + vr, c + vc) != (row_of[t, v], col_of[t, v]):
                raise CodegenError(f"internal: split of {name} disagrees at t={t}, v={v}")
    return split
