"""TMA tiled boxes: the legality rules of a tensor map and the shared-memory image of a box.

A box lands in shared memory densely, dim0 fastest, and the byte swizzle of the tensor
map is applied to the shared-memory address (PTX ISA, "Tensors": tiled mode, bounding box,
swizzling modes; CUDA driver `cuTensorMapEncodeTiled`). Elements outside the tensor are
filled, and the whole box still counts toward the mbarrier transaction bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..layout import Layout, LayoutError
from ..swizzle import ComposedLayout, hopper_swizzle
from .smem import SWIZZLE_SPAN_BYTES

MAX_RANK = 5
MAX_BOX_DIM = 256
GLOBAL_ALIGN = 16
SMEM_ALIGN = 128
SMEM_ALIGN_SW128 = 1024


class TmaError(LayoutError):
    """A TMA box the hardware (or cuTensorMapEncodeTiled) would reject."""


@dataclass(frozen=True)
class TmaBox:
    """A tiled-mode tensor map and one box of it.

    global_strides are the byte strides of every dim; dim 0 must be dense (its stride is
    the element size). Element strides are all 1 (traversal strides are not modelled).
    """

    element_bytes: int
    global_shape: tuple[int, ...]
    global_strides: tuple[int, ...]
    box: tuple[int, ...]
    swizzle: str = "none"
    global_address: int = 0
    smem_address: int = 0

    def __post_init__(self):
        object.__setattr__(self, "global_shape", tuple(self.global_shape))
        object.__setattr__(self, "global_strides", tuple(self.global_strides))
        object.__setattr__(self, "box", tuple(self.box))
        self.check()

    def check(self):
        """Raise TmaError naming the first broken rule and how to fix it."""
        rank = len(self.global_shape)
        if not 1 <= rank <= MAX_RANK:
            raise TmaError(f"a TMA tensor has 1 to {MAX_RANK} dims, got {rank}")
        if len(self.box) != rank or len(self.global_strides) != rank:
            raise TmaError(f"box {self.box} and strides {self.global_strides} need one entry "
                           f"per dim of the {rank}-dim tensor")
        if self.element_bytes not in (1, 2, 4, 8):
            raise TmaError(f"element size must be 1, 2, 4 or 8 bytes, got {self.element_bytes}")
        if self.swizzle not in SWIZZLE_SPAN_BYTES:
            raise TmaError(f"unknown swizzle {self.swizzle!r}; choose one of "
                           f"{', '.join(SWIZZLE_SPAN_BYTES)}")
        for d, (extent, b) in enumerate(zip(self.global_shape, self.box)):
            if not (isinstance(extent, int) and extent >= 1):
                raise TmaError(f"global dim {d} has extent {extent!r}; it must be >= 1")
            if not (isinstance(b, int) and 1 <= b <= MAX_BOX_DIM):
                raise TmaError(f"box dim {d} is {b!r}; box dims must be in [1, {MAX_BOX_DIM}]")
        if self.global_strides[0] != self.element_bytes:
            raise TmaError(f"dim 0 must be contiguous (stride {self.element_bytes} B), got "
                           f"{self.global_strides[0]} B; put the contiguous dim first")
        for d, s in enumerate(self.global_strides[1:], start=1):
            if s % GLOBAL_ALIGN or s <= 0:
                raise TmaError(f"global stride of dim {d} is {s} B; TMA needs positive "
                               f"multiples of {GLOBAL_ALIGN} B (pad the leading dimension)")
        if self.global_address % GLOBAL_ALIGN:
            raise TmaError(f"global address {self.global_address:#x} is not {GLOBAL_ALIGN}-byte "
                           "aligned")
        inner = self.inner_box_bytes
        if inner % 16:
            raise TmaError(f"the inner box dim is {inner} B; it must be a multiple of 16 B "
                           f"(box[0] a multiple of {max(1, 16 // self.element_bytes)} elements)")
        if self.swizzle != "none" and inner > SWIZZLE_SPAN_BYTES[self.swizzle]:
            span = SWIZZLE_SPAN_BYTES[self.swizzle]
            raise TmaError(f"the inner box dim is {inner} B, wider than the {span}-byte span of "
                           f"the {self.swizzle} swizzle; use box[0] <= "
                           f"{span // self.element_bytes} elements or a wider swizzle")
        align = SMEM_ALIGN_SW128 if self.swizzle == "128B" else SMEM_ALIGN
        if self.smem_address % align:
            raise TmaError(f"shared destination {self.smem_address:#x} is not {align}-byte "
                           f"aligned (needed for swizzle {self.swizzle})")

    @property
    def inner_box_bytes(self) -> int:
        return self.box[0] * self.element_bytes

    @property
    def tx_bytes(self) -> int:
        """Bytes one load adds to the mbarrier tx-count: the full box, out-of-bounds included."""
        return prod(self.box) * self.element_bytes

    def smem_image(self) -> ComposedLayout:
        """Box element coordinate (c0, c1, ...) -> shared-memory byte address."""
        strides, step = [], self.element_bytes
        for b in self.box:
            strides.append(step)
            step *= b
        dense = Layout(self.box, tuple(strides)) if len(self.box) > 1 else Layout(self.box[0],
                                                                                  strides[0])
        return ComposedLayout(hopper_swizzle(self.swizzle), self.smem_address, dense)

    def in_bounds(self, box_origin, coord) -> bool:
        """Does box element `coord` of the box at `box_origin` lie inside the tensor?"""
        return all(0 <= o + c < extent
                   for o, c, extent in zip(box_origin, coord, self.global_shape))
