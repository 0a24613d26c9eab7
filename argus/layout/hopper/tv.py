"""Thread-value layouts: which thread and which register hold each element of a tile.

A TV layout is a `Layout` from (thread, value) to the column-major tile index m + M*n.
The formula lives in its shape:stride, so `coord(t, v)` works on ints and on z3 terms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import symbolic as sym
from ..int_tuple import flatten
from ..layout import Layout, LayoutError


class TVLayoutError(LayoutError):
    """A thread-value layout that is not a bijection onto its tile, or a bad (t, v)."""


@dataclass(frozen=True)
class TVLayout:
    """(thread, value) -> element (row, col) of an M x N tile, through a shape:stride layout."""

    name: str
    layout: Layout  # ((thread modes), (value modes)) -> m + M*n
    tile: tuple[int, int]  # (M, N)
    threads: int
    values: int

    def __post_init__(self):
        if self.layout.rank() != 2:
            raise TVLayoutError(f"{self.name}: a TV layout has two modes (thread, value), "
                                f"got {self.layout}")
        t_size, v_size = self.layout[0].size(), self.layout[1].size()
        if (t_size, v_size) != (self.threads, self.values):
            raise TVLayoutError(f"{self.name}: layout {self.layout} has {t_size} threads x "
                                f"{v_size} values, declared {self.threads} x {self.values}")

    def index(self, t, v):
        """The column-major tile index m + M*n of thread t's value v (int or z3 term)."""
        if not (sym.is_symbolic(t) or sym.is_symbolic(v)):
            if not (0 <= t < self.threads and 0 <= v < self.values):
                raise TVLayoutError(f"{self.name}: (t={t}, v={v}) is outside "
                                    f"[0,{self.threads}) x [0,{self.values})")
        return self.layout((t, v))

    def coord(self, t, v):
        """(row, col) of thread t's value v; ints in, ints out; z3 terms in, z3 terms out."""
        idx = self.index(t, v)
        rows = self.tile[0]
        return sym.umod(idx, rows), sym.udiv(idx, rows)

    def index_table(self) -> np.ndarray:
        """index[t, v] for every thread and value: the same shape:stride sum, on numpy arrays."""
        flat = np.arange(self.threads * self.values, dtype=np.int64)
        index = np.zeros_like(flat)
        for extent, stride in zip(flatten(self.layout.shape), flatten(self.layout.stride)):
            index += (flat % extent) * stride  # colexicographic: first mode fastest
            flat //= extent
        return index.reshape(self.values, self.threads).T

    def coord_table(self) -> tuple[np.ndarray, np.ndarray]:
        """(row[t, v], col[t, v]) for every thread and value."""
        index = self.index_table()
        return index % self.tile[0], index // self.tile[0]

    def owner_table(self) -> tuple[np.ndarray, np.ndarray]:
        """(thread[M,N], value[M,N]); raises unless every element has exactly one owner."""
        rows, cols = self.tile
        thread = np.full((rows, cols), -1, dtype=np.int64)
        value = np.full((rows, cols), -1, dtype=np.int64)
        row_of, col_of = self.coord_table()
        for t in range(self.threads):
            for v in range(self.values):
                m, n = int(row_of[t, v]), int(col_of[t, v])
                if not (0 <= m < rows and 0 <= n < cols):
                    raise TVLayoutError(f"{self.name}: T{t} V{v} -> ({m}, {n}) falls outside "
                                        f"the {rows}x{cols} tile")
                if thread[m, n] >= 0:
                    raise TVLayoutError(f"{self.name}: element ({m}, {n}) is held by both "
                                        f"T{thread[m, n]} V{value[m, n]} and T{t} V{v}")
                thread[m, n], value[m, n] = t, v
        if (thread < 0).any():
            m, n = (int(x) for x in np.argwhere(thread < 0)[0])
            raise TVLayoutError(f"{self.name}: element ({m}, {n}) has no owner; the layout "
                                f"covers {self.threads * self.values} of {rows * cols} elements")
        return thread, value

    def __str__(self):
        return f"{self.name}: {self.layout} over {self.tile[0]}x{self.tile[1]}"
