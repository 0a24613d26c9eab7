"""What an IR value is in the generated C++: an expression plus what the lowering needs to
know statically (shapes, layouts, the shared-memory geometry, the tensor behind a tile)."""

from __future__ import annotations

from dataclasses import dataclass

from argus.ir.types import DType

from .smem_tiles import TileGeometry

C_SCALAR = {DType.index: "int", DType.int32: "int", DType.pred: "bool", DType.fp32: "float"}
C_ELEMENT = {DType.bf16: "argus::u16", DType.fp16: "argus::u16", DType.fp32: "float",
             DType.int32: "int", DType.fp8e4m3: "unsigned char"}


@dataclass(frozen=True)
class Scalar:
    expr: str


@dataclass(frozen=True)
class TensorParam:
    """A global tensor kernel parameter: its pointer name, dtype and (symbolic) shape."""
    name: str
    dtype: DType
    shape: tuple            # ints or C names of the size parameters
    pointer: str


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

    def reg(self, v: str) -> str:
        """The C lvalue of this fragment's value number `v` (an expression)."""
        return f"{self.name}[{v}]" if self.first == "0" else f"{self.name}[{self.first} + {v}]"
