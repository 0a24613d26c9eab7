"""Swizzle<B,M,S> functions and swizzled (composed) layouts, with an explicit unit.

Swizzle<B,M,S>(x) = x xor ((x & YYY) >> S), where YYY is B bits starting at bit M+S (for
S > 0; S < 0 shifts left). Hopper applies its shared-memory swizzles to *byte* addresses
(SW128 is <3,4,3>: bits 4-6 ^= bits 7-9); an element offset needs the same function with
M lowered by log2(element size). A `Swizzle` records which unit it acts on, and the
conversions between units are explicit, so a byte swizzle is never applied to element
offsets by mistake.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import int_tuple as it
from . import symbolic as sym
from .layout import Layout, LayoutError, composition as _compose_layouts

UNITS = ("byte", "element")
CHUNK_BYTES = 16  # Hopper swizzles permute 16-byte chunks (M = 4 in byte units)


class SwizzleError(LayoutError):
    """A swizzle that cannot be built, inverted or converted as asked."""


def _shift(x, s: int):
    """x >> s for s >= 0, x << -s otherwise (logical, so valid on unsigned terms)."""
    return sym.lshr(x, s) if s >= 0 else sym.shl(x, -s)


@dataclass(frozen=True)
class Swizzle:
    """x -> x ^ ((x & yyy_mask) >> shift): a bijection on every aligned block of `span()`."""

    bits: int
    base: int
    shift: int
    unit: str = "byte"

    def __post_init__(self):
        for name in ("bits", "base", "shift"):
            if not it.is_int(getattr(self, name)):
                raise SwizzleError(f"Swizzle {name} must be an int, got {getattr(self, name)!r}")
        if self.bits < 0 or self.base < 0:
            raise SwizzleError(f"Swizzle<{self.bits},{self.base},{self.shift}>: bits and base "
                               "must be non-negative")
        if self.unit not in UNITS:
            raise SwizzleError(f"Swizzle unit must be one of {UNITS}, got {self.unit!r}")

    # -- masks and extent ---------------------------------------------------------------
    @property
    def yyy_mask(self) -> int:
        """The bits that are read (and shifted onto zzz_mask)."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_mask(self) -> int:
        """The bits that are flipped."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def span(self) -> int:
        """The smallest power of two the swizzle permutes within (1024 B for SW128)."""
        return 1 << (self.base + self.bits + abs(self.shift))

    def is_identity(self) -> bool:
        return self.bits == 0

    def is_involution(self) -> bool:
        """Masks disjoint (|shift| >= bits): the swizzle is its own inverse."""
        return self.bits == 0 or abs(self.shift) >= self.bits

    # -- function -----------------------------------------------------------------------
    def __call__(self, x):
        if self.is_identity():
            return x
        if sym.is_symbolic(x):
            x = sym.widen(x, self.span().bit_length() - 1)
        return sym.xor(x, _shift(sym.band(x, self.yyy_mask), self.shift))

    def inverse(self):
        """The inverse function; raises when the swizzle is not a bijection (shift 0)."""
        if self.is_involution():
            return self
        if self.shift == 0:
            raise SwizzleError(f"{self} is not invertible: with shift 0 it clears the masked "
                               "bits (x ^ (x & mask)); use a non-zero shift")
        return SwizzleInverse(self)

    # -- units --------------------------------------------------------------------------
    def to_elements(self, element_bytes: int) -> "Swizzle":
        """This byte swizzle as a function of element offsets (elements of that size)."""
        if self.unit != "byte":
            raise SwizzleError(f"{self} already acts on elements; to_elements converts a byte "
                               "swizzle")
        k = _log2_element(element_bytes, self)
        return Swizzle(self.bits, self.base - k, self.shift, "element")

    def to_bytes(self, element_bytes: int) -> "Swizzle":
        """This element swizzle as a function of byte addresses."""
        if self.unit != "element":
            raise SwizzleError(f"{self} already acts on bytes; to_bytes converts an element "
                               "swizzle")
        k = _log2_element(element_bytes, None)
        return Swizzle(self.bits, self.base + k, self.shift, "byte")

    def __repr__(self):
        return f"Sw<{self.bits},{self.base},{self.shift}>" + ("" if self.unit == "byte" else "[elem]")


def _log2_element(element_bytes, byte_swizzle):
    if not it.is_int(element_bytes) or element_bytes < 1 or element_bytes & (element_bytes - 1):
        raise SwizzleError(f"element size {element_bytes!r} bytes is not a power of two, so it "
                           f"does not divide the {CHUNK_BYTES}-byte swizzle chunk")
    k = element_bytes.bit_length() - 1
    if byte_swizzle is not None and k > byte_swizzle.base:
        chunk = 1 << byte_swizzle.base
        raise SwizzleError(f"{element_bytes}-byte elements do not divide the {chunk}-byte chunk "
                           f"that {byte_swizzle} keeps fixed; the swizzle would move bytes "
                           "inside an element")
    return k


@dataclass(frozen=True)
class SwizzleInverse:
    """The inverse of a swizzle whose masks overlap (0 < |shift| < bits).

    Over GF(2) the swizzle is I + N with N nilpotent, so the inverse is I + N + N^2 + ...
    """

    swizzle: Swizzle

    @property
    def unit(self) -> str:
        return self.swizzle.unit

    def span(self) -> int:
        return self.swizzle.span()

    def __call__(self, x):
        sw = self.swizzle
        if sym.is_symbolic(x):
            x = sym.widen(x, sw.span().bit_length() - 1)
        result, term = x, x
        for _ in range(sw.bits):
            term = _shift(sym.band(term, sw.yyy_mask), sw.shift)
            result = sym.xor(result, term)
        return result

    def inverse(self) -> Swizzle:
        return self.swizzle


# The Hopper shared-memory swizzle modes (PTX "Shared Memory Matrix Layout"), on bytes.
HOPPER_SWIZZLES = {
    "none": Swizzle(0, 4, 3),
    "32B": Swizzle(1, 4, 3),
    "64B": Swizzle(2, 4, 3),
    "128B": Swizzle(3, 4, 3),
}


def hopper_swizzle(mode: str) -> Swizzle:
    """The byte swizzle of a Hopper mode: "none", "32B", "64B" or "128B"."""
    try:
        return HOPPER_SWIZZLES[mode]
    except KeyError:
        raise SwizzleError(f"unknown Hopper swizzle mode {mode!r}; choose one of "
                           f"{', '.join(HOPPER_SWIZZLES)}") from None


def swizzle_none() -> Swizzle:
    return HOPPER_SWIZZLES["none"]


def swizzle_32b() -> Swizzle:
    return HOPPER_SWIZZLES["32B"]


def swizzle_64b() -> Swizzle:
    return HOPPER_SWIZZLES["64B"]


def swizzle_128b() -> Swizzle:
    return HOPPER_SWIZZLES["128B"]


class ComposedLayout:
    """swizzle(offset + layout(x)): a layout whose offsets are then swizzled.

    The offsets of `layout` are in the swizzle's unit (bytes or elements); `offset` (an int
    or a symbolic term, e.g. a stage base) is added before swizzling, as the hardware
    swizzles absolute address bits.
    """

    __slots__ = ("swizzle", "offset", "layout")

    def __init__(self, swizzle: Swizzle, offset, layout: Layout):
        if not isinstance(swizzle, Swizzle):
            raise SwizzleError(f"ComposedLayout needs a Swizzle, got {swizzle!r}")
        if not isinstance(layout, Layout):
            raise SwizzleError(f"ComposedLayout needs a Layout, got {layout!r}")
        if not sym.is_sym_int(offset) or (it.is_int(offset) and offset < 0):
            raise SwizzleError(f"ComposedLayout offset must be a non-negative int or a "
                               f"bit-vector, got {offset!r}")
        self.swizzle, self.offset, self.layout = swizzle, offset, layout

    @property
    def unit(self) -> str:
        return self.swizzle.unit

    @property
    def shape(self):
        return self.layout.shape

    def size(self):
        return self.layout.size()

    def rank(self) -> int:
        return self.layout.rank()

    def __call__(self, *args):
        value = self.layout(*args)
        if sym.is_symbolic(value) or sym.is_symbolic(self.offset):
            width = sym.width_for(sym.max_value(value) + sym.max_value(self.offset) + 1)
            value = sym.add(sym.widen(self.offset, width), sym.widen(value, width))
        else:
            value = value + self.offset
        return self.swizzle(value)

    def compose(self, tiler) -> "ComposedLayout":
        """The same swizzle and offset over layout o tiler (tiling a swizzled layout)."""
        return ComposedLayout(self.swizzle, self.offset, _compose_layouts(self.layout, tiler))

    def __eq__(self, other):
        if not isinstance(other, ComposedLayout):
            return NotImplemented
        if sym.is_symbolic(self.offset) or sym.is_symbolic(other.offset):
            same_offset = (sym.is_symbolic(self.offset) and sym.is_symbolic(other.offset)
                           and self.offset.eq(other.offset))
        else:
            same_offset = self.offset == other.offset
        return self.swizzle == other.swizzle and same_offset and self.layout == other.layout

    def __hash__(self):
        return hash((self.swizzle, str(self.offset), self.layout))

    def __repr__(self):
        return f"{self.swizzle} o {self.offset} o {self.layout}"
