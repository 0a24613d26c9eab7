"""What an IR value is in the generated C++: an expression plus what the lowering needs to
know statically (shapes, layouts, the shared-memory geometry, the tensor behind a tile)."""

from __future__ import annotations

from dataclasses import dataclass

from argus.ir.types import DType

from .smem_tiles import TileGeometry

C_SCALAR = {DType.index: "int", DType.int32: "int", DType.pred: "bool", DType.fp32: "float"}
C_ELEMENT = {DType.bf16: "argus::u16", DType.fp16: "argus::u16", DType.fp32: "float",
             DType.int32: "int", DType.fp8e4m3: "unsigned char"}


def c_float(x: float) -> str:
    """A C float literal (infinities and NaN by their bits)."""
    if x != x:
        return "__int_as_float(0x7fffffff)"
    if x in (float("inf"), float("-inf")):
        return "__int_as_float(0x7f800000)" if x > 0 else "__int_as_float(0xff800000)"
    return repr(float(x)) + "f"


@dataclass(frozen=True)
class Scalar:
    expr: str
    lo: int | None = None    # a known lower bound (sizes, ids and counters are >= 0)

    @property
    def nonneg(self) -> bool:
        return self.lo is not None and self.lo >= 0


@dataclass(frozen=True)
class TensorParam:
    """A global tensor kernel parameter: its pointer name, dtype and (symbolic) shape; or a
    segment of one (rows row0 .. row0 + shape[0] of `parent`, pointer moved to row0)."""
    name: str
    dtype: DType
    shape: tuple            # ints or C expressions of the sizes
    pointer: str
    parent: "TensorParam | None" = None
    row0: str = "0"         # first row of the segment in `parent` (C expression)

    @property
    def root(self) -> "TensorParam":
        """The kernel parameter a segment is part of (TMA maps describe it)."""
        return self if self.parent is None else self.parent.root

    @property
    def root_row0(self) -> str:
        """The segment's first row in the root tensor."""
        if self.parent is None:
            return "0"
        up = self.parent.root_row0
        return self.row0 if up == "0" else f"({up} + {self.row0})"


class IndexVector:
    """A uniform vector of int32 indices every thread of the warpgroup can read: a view of a
    global tile (entries past the tensor read 0) or a register array."""

    def __init__(self, length: int, element, array: str | None = None,
                 lane: str | None = None, aliases=None):
        self.length = length
        self._element = element
        self.array = array
        self.aliases = aliases   # the Fragment whose registers it reads (no copy), if any
        self.lane = lane     # a register holding the entry this thread's gather row needs
                             # (argus.ir.gather_chunks.index_row; read once where loaded)

    def element(self, i: str) -> str:
        """C expression (int) of entry i."""
        return self._element(i)


class LaneIndices:
    """The entries of a 1-D int32 fragment that threads hold in different registers (a
    `blocked` vector), as indices: each thread reads only the entries it holds, so only an
    op over a fragment of the same layout (a scatter of its values) can use them."""

    def __init__(self, fragment):
        self.fragment = fragment
        self.length = fragment.shape[0]


@dataclass(frozen=True)
class GlobalTile:
    tensor: TensorParam
    box: tuple[int, ...]
    origin: tuple[str, ...]   # C expressions of the element coordinates of the box corner


@dataclass(frozen=True)
class SmemTile:
    """A view of shared memory: 32-bit shared-window address expression + static geometry."""
    buffer: str
    address: str
    dtype: DType
    geometry: TileGeometry


@dataclass(frozen=True)
class SmemBuffer:
    name: str
    address: str
    dtype: DType
    stages: int
    stage_bytes: int
    shape: tuple[int, int]
    swizzle: str


@dataclass(frozen=True)
class Barriers:
    name: str
    address: str
    count: int


@dataclass(frozen=True)
class Barrier:
    array: str
    address: str
    index: str


@dataclass(frozen=True)
class Fragment:
    """A register array of one thread: `count` values of `dtype` through TV layout `layout`."""
    name: str
    dtype: DType
    shape: tuple[int, int]
    layout: str
    count: int
    cast: DType | None = None     # rounded to this dtype when stored (math.cast, deferred)
    first: str = "0"              # index of its first value in the array `name` (a column
                                  # block of an accumulator, frag.slice, is a window of it)
    accumulator: bool = False     # a wgmma accumulator (fenced around every wgmma group)

    def reg(self, v: str) -> str:
        """The C lvalue of this fragment's value number `v` (an expression)."""
        return f"{self.name}[{v}]" if self.first == "0" else f"{self.name}[{self.first} + {v}]"
