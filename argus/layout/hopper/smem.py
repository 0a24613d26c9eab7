"""Shared-memory operand layouts of wgmma: logical (mn, k) of an MN x K tile -> byte offset.

A tile is built from swizzle atoms (PTX ISA, "Shared Memory Matrix Layout"):
- K-major: an atom is 8 rows (mn) of `span` bytes of contiguous k;
- MN-major: an atom is 8 rows (k) of `span` bytes of contiguous mn;
where span is 16 B (no swizzle), 32, 64 or 128 B. Atoms are tiled over the tile mn first,
then k, and the byte swizzle of the mode is applied to the (absolute) byte address.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..layout import Layout, LayoutError
from ..swizzle import ComposedLayout, hopper_swizzle

SWIZZLE_SPAN_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128}
MAJORS = ("K", "MN")
ATOM_ROWS = 8


class SmemLayoutError(LayoutError):
    """A shared-memory operand layout wgmma cannot read (bad major, tiling, element size)."""


@dataclass(frozen=True)
class SmemOperand:
    """An MN x K operand tile in shared memory, and its byte layout."""

    mn: int
    k: int
    element_bytes: int
    major: str
    swizzle: str
    layout: ComposedLayout  # (mn, k) -> byte offset from the tile base (unit "byte")

    @property
    def span_bytes(self) -> int:
        return SWIZZLE_SPAN_BYTES[self.swizzle]

    @property
    def atom_elements(self) -> int:
        """Elements along the contiguous direction in one atom row."""
        return self.span_bytes // self.element_bytes

    def byte_offset(self, mn, k):
        return self.layout((mn, k))

    def unswizzled_offset(self, mn, k):
        """The address before the swizzle (what a descriptor's start address points at)."""
        return self.layout.offset + self.layout.layout((mn, k))


def _check(mn, k, element_bytes, major, swizzle):
    if major not in MAJORS:
        raise SmemLayoutError(f"major must be 'K' or 'MN', got {major!r}")
    if swizzle not in SWIZZLE_SPAN_BYTES:
        raise SmemLayoutError(f"unknown swizzle {swizzle!r}; choose one of "
                              f"{', '.join(SWIZZLE_SPAN_BYTES)}")
    if element_bytes not in (1, 2, 4):
        raise SmemLayoutError(f"wgmma shared-memory operands have 1, 2 or 4-byte elements, "
                              f"not {element_bytes}")
    if major == "MN" and element_bytes != 2:
        raise SmemLayoutError(f"{8 * element_bytes}-bit operands must be K-major in shared "
                              "memory: wgmma transposes (MN-major) only 16-bit types; store "
                              "the tile K-major")
    span = SWIZZLE_SPAN_BYTES[swizzle]
    width = span // element_bytes
    atom = (ATOM_ROWS, width) if major == "K" else (width, ATOM_ROWS)
    if mn % atom[0] or k % atom[1]:
        raise SmemLayoutError(f"a {mn}x{k} (MN x K) tile is not a whole number of "
                              f"{major}-major {swizzle} atoms of {atom[0]}x{atom[1]} elements "
                              f"({8 * element_bytes}-bit); make MN a multiple of {atom[0]} and "
                              f"K a multiple of {atom[1]}")
    return span, width


def smem_operand(mn: int, k: int, element_bytes: int, major: str = "K",
                 swizzle: str = "128B", base: int = 0) -> SmemOperand:
    """The (mn, k) -> byte layout of an MN x K tile made of swizzle atoms, starting at `base`."""
    span, width = _check(mn, k, element_bytes, major, swizzle)
    atom_bytes = ATOM_ROWS * span
    if major == "K":
        # ((row in atom, atom along mn), (element in row, atom along k))
        layout = Layout(((ATOM_ROWS, mn // ATOM_ROWS), (width, k // width)),
                        ((span, atom_bytes), (element_bytes, (mn // ATOM_ROWS) * atom_bytes)))
    else:
        layout = Layout(((width, mn // width), (ATOM_ROWS, k // ATOM_ROWS)),
                        ((element_bytes, atom_bytes), (span, (mn // width) * atom_bytes)))
    composed = ComposedLayout(hopper_swizzle(swizzle), base, layout)
    return SmemOperand(mn, k, element_bytes, major, swizzle, composed)
