"""Rules for tags: add_tag (tag_assert is translated by argus.frontend.tag_predicates)."""

from __future__ import annotations

from argus.ir.types import FragmentType, SmemTileType

from .base import Args, rule


@rule("add_tag")
def add_tag(fx, a: Args):
    x = a.value("x", FragmentType, SmemTileType, what="a fragment or smem tile")
    fields = a.get("fields") or {}
    if not fields:
        a.fail("x", "add_tag without fields", "add_tag(x, iteration=j)")
    names = tuple(sorted(fields))
    values = tuple(fields[n] for n in names)
    for n, v in zip(names, values):
        if not (isinstance(v, int) or hasattr(v, "type")):
            a.fail("x", f"tag field {n} must be a scalar or a fragment, got {v!r}")
    return fx.emit("tag.add", (x, *values), a.call, x.type, {"names": names})
