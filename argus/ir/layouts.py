"""From the names the IR carries to argus.layout objects, for the passes that need them
(verifier, interpreter, code generator): the IR stores layouts and swizzles by name so
that it stays printable and comparable; this is the one place that builds them."""

from __future__ import annotations

from .types import FragmentType, SmemTileType


class LayoutNameError(ValueError):
    pass


def fragment_layout(t: FragmentType):
    """The thread-value atom of a fragment (argus.layout.hopper.TVLayout)."""
    from argus.layout.hopper import atom_names, get_atom
    if t.layout not in atom_names():
        raise LayoutNameError(f"layout {t.layout!r} is not a Hopper atom; derived layouts "
                              "(blocked, rows(...)) are resolved by the pass that lowers them")
    return get_atom(t.layout)


def smem_operand_layout(t: SmemTileType, major: str = "K"):
    """The wgmma shared-memory operand layout of a 2-D smem tile: (mn, k) -> byte offset."""
    from argus.layout.hopper import smem_operand
    if len(t.shape) != 2:
        raise LayoutNameError(f"an smem operand is 2-D, got shape {t.shape}")
    mn, k = t.shape if major == "K" else (t.shape[1], t.shape[0])
    return smem_operand(mn, k, t.dtype.bits // 8, major, t.swizzle)
