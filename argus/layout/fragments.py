"""Which thread and register hold each element of a fragment, for every layout name the IR
uses: one definition, read by the interpreter's fragment-exact mode and by the code
generator (so the GPU and the interpreter put each element in the same register).

- a Hopper atom (`argus.layout.hopper`: wgmma accumulator, register A, ldmatrix/stmatrix)
  over a tile that is a whole number of atom tiles: the atom repeats, register
  v + V * (i + reps_rows * j) of a thread holding element (row + i * M, col + j * N) of
  repeat (i, j). The m64n64 accumulator repeated over 64 x 128 is thus exactly the m64n128
  accumulator, and the 16-bit register A atom repeated over 64 x K is the accumulator's
  registers of those columns, in order (`accumulator_slice_is_register_a`).
- `rows(L)`: one register per distinct row a thread of L holds (the quad of threads that
  shares a row of the accumulator holds it four times).
- `blocked`: row-major elements cut into vectors of W consecutive elements of a row
  (W = the largest of 8, 4, 2, 1 that divides the last dimension and leaves as many
  threads holding the fragment as single elements would), the vectors dealt out
  cyclically to the warpgroup's 128 threads: element e is entry e % W of vector j = e // W,
  held by thread j % T in registers (j // T) * W .. + W, T = gcd(128, size / W). A thread's
  W registers are W neighbours in memory, so the backend moves them with one vector access
  (16 bytes of bf16, two of fp32); consecutive threads hold consecutive vectors, so a
  warp's access is coalesced. `rows(blocked)`: every thread holds every row (a reduction
  broadcast to the warpgroup).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from math import gcd

import numpy as np

from argus.layout.hopper import atom_names, get_atom

WARPGROUP = 128


@dataclass(frozen=True, eq=False)
class FragLayout:
    """(thread, register) -> logical element; `rows`/`cols` are [thread, register] tables
    (cols is None for a 1-D fragment)."""

    name: str
    shape: tuple[int, ...]
    rows: np.ndarray
    cols: np.ndarray | None
    _flat: np.ndarray = field(init=False, repr=False)
    _first: np.ndarray = field(init=False, repr=False)   # element -> first (t, v), or -1

    def __post_init__(self):
        flat = self.rows if self.cols is None else self.rows * self.shape[1] + self.cols
        object.__setattr__(self, "_flat", flat)
        first = np.full(int(np.prod(self.shape)), -1, dtype=np.int64)
        elements, where = np.unique(flat.ravel(), return_index=True)
        first[elements] = where
        object.__setattr__(self, "_first", first)

    @property
    def threads(self) -> int:
        return self.rows.shape[0]

    @property
    def values(self) -> int:
        return self.rows.shape[1]

    def to_logical(self, regs) -> np.ndarray:
        """The logical tile from the registers; a replicated element is read from the first
        register that holds it (all holders agree unless a conversion went wrong)."""
        regs = np.asarray(regs, dtype=np.float32).ravel()
        held = self._first >= 0
        out = np.full(self._first.shape, np.nan, dtype=np.float32)
        out[held] = regs[self._first[held]]
        return out.reshape(self.shape)

    def from_logical(self, tile) -> np.ndarray:
        """The registers holding `tile` through this layout."""
        tile = np.broadcast_to(np.asarray(tile, dtype=np.float32), self.shape)
        return tile.reshape(-1)[self._flat]

    def same_as(self, other: "FragLayout") -> bool:
        return self.shape == other.shape and np.array_equal(self._flat, other._flat)

    def row_slots(self, row_layout: "FragLayout") -> np.ndarray:
        """For each [thread, register] of this 2-D layout, the register of the same thread
        in `row_layout` (a rows(...) layout) that holds its row, or -1 if none does."""
        slots = np.full(self.rows.shape, -1, dtype=np.int64)
        if row_layout.threads != self.threads:
            return slots
        for w in range(row_layout.values - 1, -1, -1):
            hit = self.rows == row_layout.rows[:, w:w + 1]
            slots[hit] = w
        return slots

    def thread_slots(self, source: "FragLayout") -> np.ndarray:
        """For each [thread, register] of this layout, the register of the same thread in
        `source` that holds the same element, or -1 (the element lives in another thread)."""
        slots = np.full(self.rows.shape, -1, dtype=np.int64)
        if source.threads != self.threads or source.shape != self.shape:
            return slots
        for w in range(source.values - 1, -1, -1):
            hit = self._flat == source._flat[:, w:w + 1]
            slots[hit] = w
        return slots


def _tiled(name: str, shape: tuple[int, ...]) -> FragLayout:
    atom = get_atom(name)
    rows, cols = atom.coord_table()
    tr, tc = atom.tile
    if len(shape) != 2 or shape[0] % tr or shape[1] % tc:
        raise ValueError(f"layout {name} covers {tr}x{tc} tiles; shape {shape} is not a "
                         f"multiple of it")
    reps_r, reps_c = shape[0] // tr, shape[1] // tc
    r_blocks, c_blocks = [], []
    for j in range(reps_c):
        for i in range(reps_r):
            r_blocks.append(rows + i * tr)
            c_blocks.append(cols + j * tc)
    return FragLayout(name, shape, np.concatenate(r_blocks, axis=1),
                      np.concatenate(c_blocks, axis=1))


BLOCKED_VECTORS = (8, 4, 2, 1)


def blocked_vector(shape: tuple[int, ...]) -> int:
    """W of the blocked layout over `shape`: the elements of a thread's vector."""
    size = int(np.prod(shape))
    return next(w for w in BLOCKED_VECTORS
                if shape[-1] % w == 0 and gcd(WARPGROUP, size // w) == gcd(WARPGROUP, size))


def _blocked(shape: tuple[int, ...]) -> FragLayout:
    size = int(np.prod(shape))
    w = blocked_vector(shape)
    threads = gcd(WARPGROUP, size // w)
    vectors = np.arange(size // w).reshape(size // w // threads, threads).T   # [thread, slot]
    e = (vectors[:, :, None] * w + np.arange(w)).reshape(threads, -1)       # [thread, register]
    if len(shape) == 1:
        return FragLayout("blocked", shape, e, None)
    return FragLayout("blocked", shape, e // shape[1], e % shape[1])


def _rows_of(inner: str, shape: tuple[int, ...]) -> FragLayout:
    n = shape[0]
    if inner == "blocked":
        return FragLayout(f"rows({inner})", shape, np.tile(np.arange(n), (WARPGROUP, 1)), None)
    atom = get_atom(inner)
    tr = atom.tile[0]
    if n % tr:
        raise ValueError(f"rows({inner}) covers {tr} rows; shape {shape} is not a multiple")
    atom_rows, _ = atom.coord_table()
    per_thread = []
    for t in range(atom.threads):
        seen: list[int] = []
        for r in atom_rows[t]:
            if int(r) not in seen:
                seen.append(int(r))
        per_thread.append(seen)
    base = np.array(per_thread, dtype=np.int64)
    reps = [base + i * tr for i in range(n // tr)]
    return FragLayout(f"rows({inner})", shape, np.concatenate(reps, axis=1), None)


@lru_cache(maxsize=None)
def frag_layout(name: str, shape: tuple[int, ...]) -> FragLayout:
    """The thread-value layout named `name` over a fragment of `shape`."""
    shape = tuple(int(d) for d in shape)
    if name == "blocked":
        return _blocked(shape)
    if name.startswith("rows(") and name.endswith(")"):
        if len(shape) != 1:
            raise ValueError(f"{name} holds a row vector; shape {shape} is not 1-D")
        return _rows_of(name[5:-1], shape)
    if name in atom_names():
        return _tiled(name, shape)
    raise ValueError(f"fragment layout {name!r} has no thread-value table in exact mode")


def layout_of(frag_type) -> FragLayout:
    """The FragLayout of an IR FragmentType."""
    return frag_layout(frag_type.layout, tuple(frag_type.shape))
