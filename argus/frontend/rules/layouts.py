"""Fragment layouts by name: the Hopper atoms of argus.layout.hopper, plus derived names."""

from __future__ import annotations

from functools import lru_cache

GENERIC = ("blocked",)   # one thread per row chunk, for plain vector loads/stores


@lru_cache(maxsize=None)
def atom_tile(name: str) -> tuple[int, int] | None:
    from argus.layout.hopper import atom_names, get_atom
    if name not in atom_names():
        return None
    return tuple(get_atom(name).tile)


def known(name: str) -> bool:
    return name in GENERIC or name.startswith("rows(") or atom_tile(name) is not None


def known_names() -> str:
    from argus.layout.hopper import atom_names
    names = [n for n in atom_names() if not n.startswith("wgmma_acc") or n.endswith(("n64",
             "n128", "n256"))]
    return ", ".join(list(GENERIC) + names) + " (and any wgmma_acc_m64n<N>)"


def shape_problem(name: str, shape: tuple[int, ...]) -> str | None:
    """Why `shape` cannot be held in layout `name`, or None."""
    tile = atom_tile(name)
    if tile is None:
        return None
    if len(shape) != 2 or shape[0] % tile[0] or shape[1] % tile[1]:
        return f"layout {name} covers {tile[0]}x{tile[1]} tiles; shape {shape} is not a multiple"
    return None
