"""The abstract values of the tag pass: what each SSA value stands for.

Terms are 64-bit z3 bit-vectors (or ints) over the context's variables. Fragment tags
are written over two *position* variables (row `pr`, column `pc` of the element in the
fragment's logical tile); an instantiation substitutes concrete positions or the
(thread, register) -> position formula of the fragment's TV layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import z3

from argus.ir.nodes import Loc


@dataclass(frozen=True)
class GlobalTile:
    """tile(X, box, coords): element (p0, p1) is X[origin0 + p0, origin1 + p1]."""
    tensor: str
    box: tuple[int, ...]
    origin: tuple                 # terms: coords[i] * box[i]
    extents: tuple                # the tensor's shape as terms
    loc: Loc
    window: Any = None            # the rows of a segment (segments.Window): rows outside
                                  # read zeros and are not written
    rows: Any = None              # an index vector (routing.IndexVector): box row r is the
                                  # tensor's row rows.entry(r) (a gather)


@dataclass(frozen=True)
class SmemBuffer:
    name: str
    stages: int
    shape: tuple[int, ...]
    element_bytes: int
    swizzle: str

    @property
    def stage_bytes(self) -> int:
        n = self.element_bytes
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class SmemView:
    """A stage of a buffer (offset 0) or a tile of a stage at a logical offset."""
    buffer: SmemBuffer
    stage: Any                    # term
    offset: tuple                 # logical (row, col) of the view's (0, 0) in the stage
    shape: tuple[int, ...]
    stage_loc: Loc                # where the stage was selected (buf[s])


@dataclass(frozen=True)
class Barrier:
    array: str
    index: Any


@dataclass(frozen=True)
class Contribution:
    """One wgmma site's products added into an accumulator element: per k-step j, A's
    coordinate along k and whether the product can be non-zero (both operand elements
    inside their tensors; TMA fills the others with zeros), as terms over the position,
    the loop counters accumulated since the reset and kk."""
    k: tuple                      # per j: term
    valid: tuple                  # per j: z3 Bool
    axis_extent: Any              # the extent of A's k axis (e.g. K)
    accumulated: tuple[str, ...]  # loop counters since the reset
    kinstr: int                   # kk ranges over [0, kinstr)
    loc: Loc
    # the element's A row and B row (its row and column) are real rows of their tensors:
    # inside the tensor and its segment, or a live gathered row (z3 Bools over the
    # position and the loop counters; None: not known). An element that is not real is
    # no product of the kernel's data (TMA zeros, or the next segment's rows): a store
    # drops it (padding) and a softmax must mask it (mask.real_keys)
    real_row: Any = None
    real_col: Any = None
    # the segment window the k coordinate must lie in (B's rows of an MN-major B that is a
    # segment: attention's keys of one head), None: every k below axis_extent
    k_window: Any = None
    # conditions of the ifs around the site that stay the same from the accumulator's
    # reset to its use (walker.site_conditions): part of every step's validity, left out
    # of `valid` so that a use under the same ifs asks no more of them (valid_under)
    guard: tuple = ()

    def valid_under(self, path) -> tuple:
        """Per step, whether the product is added, as asked at a use whose path is
        `path`: the guard's conditions that the path holds (the same terms) go without
        saying there; the others are conjoined."""
        extra = self.unheld(path)
        return self.valid if not extra else tuple(z3.And(v, *extra) for v in self.valid)

    def unheld(self, path) -> list:
        """The guard's conditions that a use under `path` does not hold."""
        held = {p.get_id() for p in path}
        return [g for g in self.guard if g.get_id() not in held]


@dataclass
class FragTag:
    """The tag of every element of a fragment, as terms over the positions (pr, pc).

    state: "empty" (constants, nothing accumulated), "data", or "unknown" (not modelled:
    nothing is claimed about it and no check depending on it is made).
    """
    state: str = "empty"
    fields: dict[str, Any] = field(default_factory=dict)      # row, col, user fields
    source: str = ""                                           # "A x B", "X", ...
    contributions: list[Contribution] = field(default_factory=list)
    reset_scope: tuple[str, ...] = ()                          # variables in scope at reset
    why_unknown: str = ""
    init: Any = 0.0               # the constant an "empty" fragment holds (None: unknown)
    init_loc: Optional[Loc] = None
    meaning: Any = None           # which number it is, for the online softmax (meaning.py)
    summed: list = field(default_factory=list)  # terms of an elementwise sum (combine.py)

    def copy(self) -> "FragTag":
        return FragTag(self.state, dict(self.fields), self.source, list(self.contributions),
                       self.reset_scope, self.why_unknown, self.init, self.init_loc,
                       self.meaning, list(self.summed))


@dataclass
class Fragment:
    shape: tuple[int, ...]
    layout: str                   # the TV atom name, or "blocked" and other derived names
    tag: FragTag
    loc: Loc
    origin: Any = None            # the tensors it is computed from (origin.py)


@dataclass(frozen=True)
class Writer:
    """A TMA load into a shared-memory stage: who fills which stage with which box."""
    view: SmemView
    src: GlobalTile
    barrier: Barrier
    scope: tuple[str, ...]        # variables of the loops around it
    loc: Loc
    path: tuple = ()              # the conditions of the ifs around it
    multicast: Any = None         # the multicast mask (a term), None for a plain load


@dataclass(frozen=True)
class StoreRecord:
    tensor: str
    dst: tuple                    # terms over pr, pc and the scope
    extents: tuple
    identity: tuple[str, ...]     # variables that tell two writers apart (not the step i)
    layout: str
    shape: tuple[int, ...]
    warpgroup: Optional[int]      # the warpgroup of the role (absolute), None if all
    thread_base: int              # first thread of that warpgroup in the block
    path: tuple                   # path conditions (z3 Bools)
    loc: Loc
    window: Any = None            # the rows of a segment destination (segments.Window)


@dataclass(eq=False)
class SmemWrite:
    """A store of a register fragment into a shared-memory view: element (pr, pc) of the
    fragment lands on element view.offset + (pr, pc) of the view's stage, at the byte the
    stage layout (tma.StageLayout, the backend's convention) gives it."""
    view: SmemView
    tag: FragTag
    layout: str
    shape: tuple[int, ...]
    scope: tuple[str, ...]        # the loops around the store
    path: tuple                   # its path conditions
    role: Optional[str]
    warpgroup: Optional[int]      # absolute warpgroup of the walk
    order: int                    # position of the op in program order
    loc: Loc
    op: Any = None                # the store op


@dataclass(eq=False)
class TmaStoreRead:
    """A TMA store: element (pr, pc) of the global box `dst` is element view.offset +
    (pr, pc) of the shared-memory stage, read at the byte of the TMA box image."""
    view: SmemView
    dst: GlobalTile
    scope: tuple[str, ...]
    path: tuple
    role: Optional[str]
    warpgroup: Optional[int]
    order: int
    loc: Loc
    op: Any = None                # the tma_store op


@dataclass(eq=False)
class AddRecord:
    """An atomic_add of a fragment into a global tile: the writer (as for a store) plus the
    tag of what it adds (the k contributions of a partial sum)."""
    store: StoreRecord
    tag: FragTag
