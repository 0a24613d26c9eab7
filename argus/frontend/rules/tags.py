"""Rules for tags: add_tag (tag_assert is translated by argus.frontend.tag_predicates)."""

from __future__ import annotations

from argus.ir.types import FragmentType, GlobalTensorType, SmemTileType

from .base import Args, rule


@rule("heads")
def heads(fx, a: Args):
    x = a.get("x")
    if not (hasattr(x, "type") and isinstance(x.type, GlobalTensorType)
            and len(x.type.shape) == 2):
        a.fail("x", "declares the heads of a 2-D kernel tensor",
               "heads(Q, HD, group=G) with Q: Tensor[\"RQ\", \"CQ\", bf16]")
    cols = a.static_int("cols", minimum=1)
    group = a.static_int("group", minimum=1) if a.get("group") is not None else 1
    width = x.type.shape[1]
    if isinstance(width, int) and width % cols:
        a.fail("cols", f"{x.name} has {width} columns, not a whole number of heads of {cols}")
    return fx.emit("tag.heads", (x,), a.call, None, {"cols": cols, "group": group})


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
