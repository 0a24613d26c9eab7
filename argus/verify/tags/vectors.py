"""The router's register math (examples/moe_route.py) in the tag pass: plain `blocked`
tiles and their row vectors, element coordinates, row reductions, prefix sums, entries of
fragments as scalars, fragments as index vectors, scatters, and stores of 1-D tiles.

Tags say which tensor elements a value is about (its provenance), not what it is:

- `row_of(x)` / `col_of(x)` is about the elements of x (x's fields; a sum's fields);
- a row reduction of a tile is about the row: the fields that do not depend on the
  column (`row`, the token) survive, the column does not;
- a prefix sum mixes the elements of the vector: only fields that do not depend on the
  position survive (usually none);
- an entry of a fragment (`element(v, i)`) is a data value: a fresh variable, which the
  pass never uses as an index (only as a value in selects and sums);
- a 1-D store is checked as a store of an n x 1 tile (coordinates, races, coverage);
- a scatter writes each value to the slot its index entry names: the value and the index
  entry must belong to the same routing entry (`tag.routing`: a token id scattered to its
  own slot). Where the slots point (that they are distinct and cover the array, the slot
  sort) is data the tag pass cannot see: it is assumed, stated in docs/design/
  verifier-moe.md, and the destinations are not part of the race and coverage checks.

Layouts of the Hopper atoms (accumulators, ldmatrix) are left to the rules registered
before these (attention's), or reported as not modelled."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.verify.finding import Finding
from argus.verify.smt import bv, holds, value

from . import report
from .report import tv_atom
from .routing import IndexVector
from .values import FragTag, Fragment, GlobalTile


def plain_layout(layout: str) -> bool:
    """A plain layout (blocked, rows(blocked)): no Hopper atom's, nor a row vector of one."""
    base = layout[len("rows("):-1] if layout.startswith("rows(") else layout
    return tv_atom(base) is None


def plain(frag) -> bool:
    """A fragment of a plain layout (the router's register math)."""
    return isinstance(frag, Fragment) and plain_layout(frag.layout)


def _kept(w, tag: FragTag, drop) -> FragTag:
    """tag's fields that do not mention the position variable `drop`, as a plain tag."""
    if tag.state != "data":
        return tag.copy() if tag.state == "unknown" else FragTag(
            "empty", reset_scope=tag.reset_scope, init=None, init_loc=tag.init_loc)
    from .abstraction import install
    info = install(w.ctx)
    fields = {n: t for n, t in tag.fields.items() if not info.mentions(bv(t), drop)}
    return FragTag("data", fields, tag.source, reset_scope=tag.reset_scope)


def frag_coord(w, op: Op, prev) -> None:
    x = w.value(op.arg("x"))
    if not plain(x):
        return prev(w, op) if prev else _unmodelled(w, op, "coordinates of atom fragments")
    t = op.result.type
    tag = x.tag
    out = (FragTag("data", dict(tag.fields), tag.source, reset_scope=tag.reset_scope)
           if tag.state == "data" else _kept(w, tag, w.pos["pr"]))
    w.env[op.result] = Fragment(t.shape, t.layout, out, op.loc)


def reduce_row(w, op: Op, prev) -> None:
    x = w.value(op.arg("x"))
    if not plain(x):
        return prev(w, op) if prev else _unmodelled(w, op, "reductions of atom fragments")
    t = op.result.type
    w.env[op.result] = Fragment(t.shape, t.layout, _kept(w, x.tag, w.pos["pc"]), op.loc)


def prefix_sum(w, op: Op) -> None:
    x = w.value(op.arg("x"))
    t = op.result.type
    if not plain(x) or len(x.shape) != 1:
        _unmodelled(w, op, "prefix sums of fragments other than 1-D plain vectors")
        return
    w.env[op.result] = Fragment(t.shape, t.layout, _kept(w, x.tag, w.pos["pr"]), op.loc)


def element(w, op: Op) -> None:
    """An entry of a fragment as a scalar: data, one fresh variable per op."""
    cache = w.__dict__.setdefault("fragment_entries", {})
    if id(op) not in cache:
        cache[id(op)] = (op, w.ctx.var(f"{op.results[0].name}", "data"))
    w.env[op.result] = cache[id(op)][1]


def from_frag(w, op: Op) -> None:
    x = w.value(op.arg("x"))
    if not isinstance(x, Fragment):
        _unmodelled(w, op, "an index vector from a value that is not known")
        return
    n = op.result.type.length
    w.env[op.result] = IndexVector(n, value=lambda p: _data(w, op, p), fragment=x)


def _data(w, op, p):
    """The (unknown) value of entry p of an index vector computed in registers."""
    cache = w.__dict__.setdefault("computed_indices", {})
    if id(op) not in cache:
        cache[id(op)] = (op, z3.Function(f"{op.results[0].name}#values", z3.BitVecSort(64),
                                         z3.BitVecSort(64)))
    return cache[id(op)][1](bv(p))


def scatter(w, op: Op) -> None:
    dst, rows, col, src = (w.value(op.arg(n)) for n in ("dst", "rows", "col", "src"))
    if not (isinstance(rows, IndexVector) and isinstance(src, Fragment)):
        _unmodelled(w, op, "a scatter whose rows or values are not known")
        return
    if w.phase != "check":
        return
    index = rows.fragment
    if index is None or index.tag.state != "data" or src.tag.state != "data":
        why = "the scattered values or their index vector carry no tag"
        if not (src.tag.state == "unknown" and src.tag.why_unknown.startswith("tag.")):
            _unmodelled(w, op, why)
        return
    shared = [n for n in src.tag.fields if n in index.tag.fields and n not in ("row", "col")]
    if not shared:
        _unmodelled(w, op, "scattered values that no routing field ties to their index "
                           "entries")
        return
    pr = w.pos["pr"]
    bounds = [z3.ULT(pr, src.shape[0])]
    for name in shared:
        claim = bv(src.tag.fields[name]) == bv(index.tag.fields[name])
        if holds(w.ctx, claim, [*w.path, *bounds]):
            continue
        scope = w.scope_vars()
        model = report.find(w, z3.Not(claim), scope, bounds)
        if model is None:
            continue
        i = value(model, pr)
        got, want = value(model, src.tag.fields[name]), value(model, index.tag.fields[name])
        cex = report.counterexample(w, model, scope, elements=(report.element(
            model, "index entry", (pr,), {f"{name} of the value": src.tag.fields[name]},
            {f"{name} of the index entry": index.tag.fields[name]}),))
        w.report(Finding(
            "tag.routing", "error",
            f"scatter writes the value of {name} {got} through index entry {i}, which "
            f"belongs to {name} {want}", op.loc, "scatter",
            "scatter each value through the index computed for the same element (the same "
            "row of the same tile)", cex))
        return


def store(w, op: Op, prev) -> None:
    """A store of a 1-D tile, checked as an n x 1 tile; others as they are (store.py)."""
    dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
    if not (isinstance(dst, GlobalTile) and len(dst.box) == 1 and isinstance(src, Fragment)
            and len(src.shape) == 1):
        prev(w, op)
        return
    flat_dst = GlobalTile(dst.tensor, (dst.box[0], 1), (dst.origin[0], 0),
                          (dst.extents[0], 1), dst.loc, dst.window, dst.rows)
    flat_src = Fragment((src.shape[0], 1), src.layout, src.tag, src.loc)
    saved = {v: w.env.get(v) for v in (op.arg("dst"), op.arg("src"))}
    w.env[op.arg("dst")], w.env[op.arg("src")] = flat_dst, flat_src
    try:
        prev(w, op)
    finally:
        w.env.update(saved)


def _unmodelled(w, op, why) -> None:
    w.not_modelled(op, why)
    for r in op.results:
        t = r.type
        w.env[r] = (Fragment(t.shape, t.layout, FragTag("unknown", why_unknown=why), op.loc)
                    if hasattr(t, "layout") else None)
