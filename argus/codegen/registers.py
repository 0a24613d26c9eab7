"""A fragment layout as C: which element register v of thread `argus_lane` holds.

The tables come from `argus.layout.fragments` (the definition the interpreter's exact mode
uses too). A coordinate table [thread, register] is split into a thread part (a C
expression of the lane, built from the bits of the thread index) plus a per-register part
(a C expression of an unrolled loop counter, folded by the compiler); the `blocked` layouts
whose rows are not a power of two wide fall back to their closed form (vector lane * W
+ T * W * (v / W) + v % W, argus.layout.fragments). `vector()` finds the runs of registers
that are neighbours in a row, which loads and stores move with one vector access.
Everything here is generation-time Python: a layout that cannot be addressed this way is a
CodegenError naming the layout, never wrong code.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from argus.layout.fragments import WARPGROUP, FragLayout, blocked_vector, frag_layout

from .errors import CodegenError

LANE = "argus_lane"


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def bit_linear(values, var: str) -> str | None:
    """A C expression equal to values[var] for var in 0..n-1, if the function is affine over
    the bits of var (each bit adds a constant), or affine in var; else None."""
    vals = [int(x) for x in values]
    n = len(vals)
    base = vals[0]
    if n == 1:
        return str(base)
    step = vals[1] - vals[0]
    if all(vals[i] == base + step * i for i in range(n)):
        return _join(base, [(var, step)])
    if not _pow2(n):
        return None
    bits = n.bit_length() - 1
    coef = [vals[1 << b] - base for b in range(bits)]
    for x in range(n):
        if vals[x] != base + sum(coef[b] for b in range(bits) if x >> b & 1):
            return None
    terms, b = [], 0
    while b < bits:
        if coef[b] == 0:
            b += 1
            continue
        k = 1
        while b + k < bits and coef[b + k] == coef[b] << k:
            k += 1
        digit = var if b == 0 else f"({var} >> {b})"
        if b + k < bits:
            digit = f"({digit} & {(1 << k) - 1})"
        terms.append((digit, coef[b]))
        b += k
    return _join(base, terms)


def _join(base: int, terms) -> str:
    parts = [f"{d} * {c}" if c != 1 else d for d, c in terms if c]
    if base or not parts:
        parts.append(str(base))
    text = " + ".join(parts)
    return text if len(parts) == 1 else f"({text})"


def index_expr(values, var: str) -> str:
    """values[var] as C: an affine expression where there is one, else a constant table
    (indexed by an unrolled counter, so the compiler folds it)."""
    text = bit_linear(values, var)
    if text is not None:
        return text
    table = ", ".join(str(int(x)) for x in values)
    return f"argus::table<{table}>({var})"


@dataclass(frozen=True)
class RegisterLayout:
    """The registers of one thread of a fragment layout, as C expressions."""
    name: str
    shape: tuple[int, ...]
    table: FragLayout

    @property
    def threads(self) -> int:
        return self.table.threads

    @property
    def values(self) -> int:
        return self.table.values

    @property
    def rank(self) -> int:
        return len(self.shape)

    def coords(self, axis: int) -> np.ndarray:
        return self.table.rows if axis == 0 else self.table.cols

    @property
    def warp_atom(self) -> bool:
        """A warp layout (ldmatrix/stmatrix): every warp of the warpgroup holds a copy."""
        return self.name.startswith(("ldmatrix", "stmatrix"))

    def coord(self, axis: int, v: str) -> str:
        """C expression of the logical coordinate `axis` of register `v` of this thread."""
        table = self.coords(axis)
        thread = table[:, 0] - table[0, 0]
        value = table[0, :]
        if np.array_equal(table, thread[:, None] + value[None, :]):
            t_expr = bit_linear(thread, f"({LANE} % 32)" if self.warp_atom else LANE)
            if t_expr is not None:
                v_expr = index_expr(value, v)
                if t_expr == "0":
                    return v_expr
                return t_expr if v_expr == "0" else f"({t_expr} + {v_expr})"
        if self.name == "blocked":
            cols, w = self.shape[-1], blocked_vector(self.shape)
            e = (f"({LANE} + {self.threads} * ({v}))" if w == 1 else
                 f"({LANE} * {w} + {self.threads * w} * (({v}) / {w}) + ({v}) % {w})")
            if self.rank == 1:
                return e
            return f"({e} / {cols})" if axis == 0 else f"({e} % {cols})"
        raise CodegenError(f"layout {self.name} over {self.shape} has no register addressing "
                           f"the backend can generate (coordinate {axis})")

    def vector(self, limit: int = 8) -> int:
        """The longest run W (a power of two, at most `limit`) such that every thread's
        registers W*i .. W*i + W-1 hold W neighbours of one row, the first in a column that
        is a multiple of W: one W-wide access moves them (1 when there is none)."""
        rows = self.table.rows
        cols = rows if self.rank == 1 else self.table.cols
        w = limit
        while w > 1:
            if self.values % w == 0:
                c = cols.reshape(self.threads, -1, w)
                r = rows.reshape(self.threads, -1, w)
                if (np.all(c[:, :, 0] % w == 0) and np.all(c - c[:, :, :1] == np.arange(w))
                        and (self.rank == 1 or np.all(r == r[:, :, :1]))):
                    return w
            w //= 2
        return 1

    def element(self, v: str) -> str:
        """C expression of the row-major element index of register v."""
        if self.rank == 1:
            return self.coord(0, v)
        return f"({self.coord(0, v)} * {self.shape[1]} + {self.coord(1, v)})"

    def held_guard(self) -> str | None:
        """The condition for this thread to hold registers at all (a `blocked` layout of
        fewer elements than the warpgroup's threads leaves the others empty)."""
        if self.warp_atom:
            return None
        return None if self.threads >= WARPGROUP else f"{LANE} < {self.threads}"

    def owner_guard(self) -> str | None:
        """The condition for this thread to be the one that writes its registers' elements
        (a replicated layout, like rows(...), holds an element in several threads: the one
        whose replication bits are zero writes it)."""
        flat = self.table._flat
        mask = 0
        for b in range(int(self.threads - 1).bit_length()):
            other = np.arange(self.threads) ^ (1 << b)
            if other.max() < self.threads and np.array_equal(flat[other], flat):
                mask |= 1 << b
        holders = np.zeros(int(np.prod(self.shape)), np.int64)
        for t in range(self.threads):
            holders[np.unique(flat[t])] += 1
        if np.any(holders != 1 << bin(mask).count("1")):
            raise CodegenError(f"layout {self.name} over {self.shape} replicates elements in "
                               "a pattern the backend cannot store from")
        first = f"{LANE} < 32" if self.warp_atom else self.held_guard()
        guards = [g for g in (first,
                              f"({LANE} & {mask}) == 0" if mask else None) if g]
        return " && ".join(guards) or None

    def whole_in_every_thread(self) -> bool:
        """A 1-D layout in which every thread holds every entry, register i entry i
        (rows(blocked)): an index vector or a scan needs no exchange."""
        n = self.shape[0]
        return self.rank == 1 and np.array_equal(self.table.rows,
                                                  np.tile(np.arange(n), (self.threads, 1)))

    def same_as(self, other: "RegisterLayout") -> bool:
        return self.table.same_as(other.table)


@lru_cache(maxsize=None)
def register_layout(name: str, shape: tuple[int, ...]) -> RegisterLayout:
    try:
        table = frag_layout(name, tuple(int(d) for d in shape))
    except ValueError as err:
        raise CodegenError(str(err)) from None
    return RegisterLayout(name, tuple(int(d) for d in shape), table)


def row_slots(tile: RegisterLayout, rows: RegisterLayout, v: str) -> str:
    """C index of the register of the row vector `rows` (a rows(...) layout) that holds the
    row of register v of `tile`, in the same thread."""
    slots = tile.table.row_slots(rows.table)
    if np.any(slots < 0):
        raise CodegenError(f"the row vector's layout {rows.name} does not hold the rows of "
                           f"{tile.name} in the same threads")
    if np.all(slots == slots[0:1]):
        return index_expr(slots[0], v)
    if np.array_equal(slots, tile.table.rows):      # rows(blocked): register r holds row r
        return tile.coord(0, v)
    raise CodegenError(f"the rows of {tile.name} sit in registers of {rows.name} that vary "
                       "by thread; convert_layout one side first")
