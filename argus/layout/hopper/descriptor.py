"""The wgmma shared-memory matrix descriptor: derived from an operand layout, encoded, read.

Bit fields (PTX ISA, "Matrix Descriptor"): start address >> 4 in bits 0-13, leading byte
offset (LBO) >> 4 in 16-29, stride byte offset (SBO) >> 4 in 32-45, base offset in 49-51,
swizzle mode in 62-63 (0 none, 1 128B, 2 64B, 3 32B).

`read_layout` models what the hardware reads for element (mn, k) of one instruction's
operand: the canonical layout of the mode ("Shared Memory Matrix Layout") at the start
address, with the swizzle applied to the absolute address bits. That is why advancing the
start address by 32 B inside a 128B-swizzled atom selects the next k16 slice.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..layout import Layout, LayoutError
from ..swizzle import ComposedLayout, hopper_swizzle
from .smem import ATOM_ROWS, SWIZZLE_SPAN_BYTES, SmemOperand

SWIZZLE_CODES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}
SWIZZLE_OF_CODE = {code: mode for mode, code in SWIZZLE_CODES.items()}
FIELD_BITS = 14  # start, LBO and SBO are 14-bit fields of 16-byte units
CHUNK = 16
UNUSED_LBO = CHUNK  # swizzled K-major layouts ignore LBO; CUTLASS encodes 1 (16 B)


class DescriptorError(LayoutError):
    """A descriptor that cannot be encoded, decoded or read as asked."""


def instruction_k(element_bytes: int) -> int:
    """K of one wgmma for this element size: 32 bytes of k (k16 for 16-bit, k32 for 8-bit)."""
    if element_bytes not in (1, 2, 4):
        raise DescriptorError(f"wgmma operands have 1, 2 or 4-byte elements, not {element_bytes}")
    return 32 // element_bytes


def pattern_repeat_bytes(swizzle: str) -> int:
    """The address period of the swizzle pattern (8 rows of its span): 1024 B for 128B."""
    return ATOM_ROWS * SWIZZLE_SPAN_BYTES[swizzle] if swizzle != "none" else CHUNK


@dataclass(frozen=True)
class MatrixDescriptor:
    """The fields of one descriptor, in bytes; `source` remembers the operand it came from."""

    start_address: int
    lbo: int
    sbo: int
    swizzle: str
    base_offset: int = 0
    source: tuple | None = field(default=None, compare=False, repr=False)  # (operand, k0)

    def validate(self) -> "MatrixDescriptor":
        """Raise DescriptorError naming the first field that the 64-bit encoding cannot hold."""
        if self.swizzle not in SWIZZLE_CODES:
            raise DescriptorError(f"unknown swizzle {self.swizzle!r}; choose one of "
                                  f"{', '.join(SWIZZLE_CODES)}")
        for name in ("start_address", "lbo", "sbo"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise DescriptorError(f"{name} must be a non-negative int of bytes, got {value!r}")
            if value % CHUNK:
                raise DescriptorError(f"{name} {value:#x} is not 16-byte aligned; the "
                                      "descriptor stores it >> 4")
            if value >> 4 >= 1 << FIELD_BITS:
                raise DescriptorError(f"{name} {value:#x} does not fit the 14-bit field of "
                                      f"16-byte units (max {((1 << FIELD_BITS) - 1) << 4:#x})")
        if not (isinstance(self.base_offset, int) and 0 <= self.base_offset < 8):
            raise DescriptorError(f"base_offset must be in [0, 8), got {self.base_offset!r}")
        return self

    def encode(self) -> int:
        self.validate()
        return ((self.start_address >> 4)
                | (self.lbo >> 4) << 16
                | (self.sbo >> 4) << 32
                | self.base_offset << 49
                | SWIZZLE_CODES[self.swizzle] << 62)

    @classmethod
    def decode(cls, bits: int) -> "MatrixDescriptor":
        if not isinstance(bits, int) or not 0 <= bits < 1 << 64:
            raise DescriptorError(f"a descriptor is a 64-bit unsigned int, got {bits!r}")
        mask = (1 << FIELD_BITS) - 1
        reserved = bits & ~(mask | mask << 16 | mask << 32 | 7 << 49 | 3 << 62)
        if reserved:
            raise DescriptorError(f"descriptor {bits:#018x} sets reserved bits {reserved:#x}")
        return cls(start_address=(bits & mask) << 4, lbo=(bits >> 16 & mask) << 4,
                   sbo=(bits >> 32 & mask) << 4, base_offset=bits >> 49 & 7,
                   swizzle=SWIZZLE_OF_CODE[bits >> 62 & 3])

    def advance_k(self, k_elems: int) -> "MatrixDescriptor":
        """The descriptor of the slice k_elems further along K of the same operand."""
        if self.source is None:
            raise DescriptorError("advance_k needs the operand the descriptor was derived "
                                  "from; build it with descriptor_for(operand, k0)")
        operand, k0 = self.source
        return descriptor_for(operand, k0 + k_elems, base_offset=self.base_offset)


def _lbo_sbo(operand: SmemOperand) -> tuple[int, int]:
    """LBO and SBO read off the operand's byte layout (the strides of its atom modes)."""
    (_, mn_outer), (_, k_outer) = operand.layout.layout.stride
    if operand.major == "K":
        # SBO: between 8-row groups along mn; LBO: between 16-byte k chunks (no swizzle)
        return (k_outer if operand.swizzle == "none" else UNUSED_LBO), mn_outer
    if operand.swizzle == "none":
        return k_outer, mn_outer  # LBO along k (8-row groups), SBO along mn (core matrices)
    return mn_outer, k_outer  # LBO between atoms along mn, SBO between 8-row k groups


def descriptor_for(operand: SmemOperand, k0: int = 0, base_offset: int = 0) -> MatrixDescriptor:
    """The descriptor of the MN x K_instr slice of `operand` that starts at column k0."""
    kk = instruction_k(operand.element_bytes)
    if k0 % kk or not 0 <= k0 < operand.k:
        raise DescriptorError(f"k0={k0} is not the start of a k{kk} slice of a K={operand.k} "
                              f"operand (use a multiple of {kk} below {operand.k})")
    base = operand.layout.offset
    if base % CHUNK:
        raise DescriptorError(f"operand base {base:#x} is not 16-byte aligned")
    repeat = pattern_repeat_bytes(operand.swizzle)
    if base % repeat and base_offset == 0:
        raise DescriptorError(f"a {operand.swizzle}-swizzled operand at {base:#x} is not "
                              f"aligned to the {repeat}-byte swizzle pattern; align the "
                              f"buffer to {repeat} B or set base_offset")
    lbo, sbo = _lbo_sbo(operand)
    start = operand.unswizzled_offset(0, k0)
    return MatrixDescriptor(start, lbo, sbo, operand.swizzle, base_offset,
                            source=(operand, k0)).validate()


def read_layout(desc: MatrixDescriptor, element_bytes: int, major: str,
                mn_extent: int) -> ComposedLayout:
    """(mn, k) of one instruction's MN x K_instr operand -> the byte address wgmma reads."""
    desc.validate()
    if desc.base_offset:
        raise DescriptorError("reads with a non-zero base offset are not modelled; align "
                              "the operand to its swizzle pattern instead")
    kk = instruction_k(element_bytes)
    per_chunk = CHUNK // element_bytes  # T: elements in 16 bytes
    span = SWIZZLE_SPAN_BYTES[desc.swizzle]
    eb = element_bytes
    if major == "K":
        step = ATOM_ROWS
        layout_of = lambda m: Layout(((ATOM_ROWS, m), (per_chunk, kk // per_chunk)),
                                     ((span, desc.sbo),
                                      (eb, desc.lbo if desc.swizzle == "none" else CHUNK)))
    elif major == "MN":
        if desc.swizzle == "none":
            step = per_chunk
            layout_of = lambda m: Layout(((per_chunk, m), (ATOM_ROWS, kk // ATOM_ROWS)),
                                         ((eb, desc.sbo), (CHUNK, desc.lbo)))
        else:
            chunks = span // CHUNK
            step = per_chunk * chunks
            layout_of = lambda m: Layout(((per_chunk, chunks, m), (ATOM_ROWS, kk // ATOM_ROWS)),
                                         ((eb, CHUNK, desc.lbo), (span, desc.sbo)))
    else:
        raise DescriptorError(f"major must be 'K' or 'MN', got {major!r}")
    if mn_extent % step:
        raise DescriptorError(f"an MN extent of {mn_extent} is not a multiple of the "
                              f"{step}-element {major}-major {desc.swizzle} group")
    return ComposedLayout(hopper_swizzle(desc.swizzle), desc.start_address,
                          layout_of(mn_extent // step))
