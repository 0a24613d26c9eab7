"""IR types: every value says which memory space it lives in, its shape and dtype.

Shapes of global tensors may be symbolic (a dimension is an int or a symbol name);
everything on chip (shared-memory buffers, register fragments) has a static shape.
Layouts and swizzles are referenced by name so later passes build them from argus.layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Union

Dim = Union[int, str]


class DType(Enum):
    bf16 = ("bf16", 16)
    fp16 = ("fp16", 16)
    fp32 = ("fp32", 32)
    fp8e4m3 = ("fp8e4m3", 8)
    int32 = ("int32", 32)
    index = ("index", 64)   # compile-time-typed integer for coordinates and sizes
    pred = ("pred", 1)      # a boolean

    @property
    def bits(self) -> int:
        return self.value[1]

    @property
    def is_float(self) -> bool:
        return self in (DType.bf16, DType.fp16, DType.fp32, DType.fp8e4m3)

    def __str__(self) -> str:
        return self.value[0]


DTYPES = {str(d): d for d in DType}


def _dims(shape: tuple[Dim, ...]) -> str:
    return ", ".join(str(d) for d in shape)


@dataclass(frozen=True)
class ScalarType:
    """A uniform scalar (same value in every thread of the block): ids, sizes, loop vars."""
    dtype: DType

    def __str__(self) -> str:
        return str(self.dtype)


@dataclass(frozen=True)
class GlobalTensorType:
    shape: tuple[Dim, ...]
    dtype: DType

    def __str__(self) -> str:
        return f"global<{self.dtype}>[{_dims(self.shape)}]"


@dataclass(frozen=True)
class GlobalTileType:
    """A box of a global tensor at a tile coordinate; the tensor is named by its param."""
    tensor: str
    shape: tuple[int, ...]
    dtype: DType

    def __str__(self) -> str:
        return f"gtile<{self.dtype}>[{_dims(self.shape)}] of {self.tensor}"


@dataclass(frozen=True)
class SmemBufferType:
    """Shared memory with a leading stage dimension (stages=1 for a single buffer)."""
    stages: int
    shape: tuple[int, ...]
    dtype: DType
    swizzle: str

    @property
    def nbytes_per_stage(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n * self.dtype.bits // 8

    def __str__(self) -> str:
        return f"smem<{self.dtype}>[{self.stages} x {_dims(self.shape)}, swizzle={self.swizzle}]"


@dataclass(frozen=True)
class SmemTileType:
    """One stage of a buffer, or a tile of a stage; `buffer` names the allocation."""
    buffer: str
    shape: tuple[int, ...]
    dtype: DType
    swizzle: str

    @property
    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n * self.dtype.bits // 8

    def __str__(self) -> str:
        return f"stile<{self.dtype}>[{_dims(self.shape)}, swizzle={self.swizzle}] of {self.buffer}"


@dataclass(frozen=True)
class FragmentType:
    """Registers of a warpgroup (or warp) holding a tile through a named TV layout."""
    shape: tuple[int, ...]
    dtype: DType
    layout: str

    def __str__(self) -> str:
        return f"frag<{self.dtype}>[{_dims(self.shape)}, layout={self.layout}]"


@dataclass(frozen=True)
class BarrierArrayType:
    """An array of mbarriers in shared memory, one per stage."""
    count: int

    def __str__(self) -> str:
        return f"mbarrier[{self.count}]"


@dataclass(frozen=True)
class BarrierType:
    """One mbarrier, an element of a BarrierArrayType value named `array`."""
    array: str

    def __str__(self) -> str:
        return f"mbarrier of {self.array}"


@dataclass(frozen=True)
class IndexVectorType:
    """A vector of int32 indices in registers (token ids, gathered rows)."""
    length: int

    def __str__(self) -> str:
        return f"indices[{self.length}]"


IRType = Union[ScalarType, GlobalTensorType, GlobalTileType, SmemBufferType, SmemTileType,
               FragmentType, BarrierArrayType, BarrierType, IndexVectorType]

INDEX = ScalarType(DType.index)
PRED = ScalarType(DType.pred)
