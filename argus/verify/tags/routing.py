"""Routing arrays (the integers an MoE router hands the expert kernels) in the tag pass.

The entries of an int32 tensor that is read as indices (`load_indices`: counts, token ids,
slots) are **values of an uninterpreted function** of that tensor, `counts(e)`,
`ids(p)`: nothing is known of them but what the kernel's `assume`s state (segments.py,
routefields.py). An index vector is abstracted as `IndexVector`: per entry position p,
its value, the coordinate in its source tensor (which routing entry it is) and whether
that coordinate is a real entry (inside its tensor and segment) or padding (read as 0).

The device-side routing ops are exact on these terms: `prefix_sum` of a short vector is
the sum of the entries before (exclusive), `round_up` rounds each entry up, `element`
selects an entry (an if-then-else chain over a counter such as the expert loop's).
Entries are assumed below 2^24 like every base variable (int32 counts are non-negative).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import z3

from argus.ir.nodes import Op
from argus.layout import symbolic as sym
from argus.verify.smt import VAR_LIMIT, WIDTH, bv, concrete, value

from . import abstraction, window_families

SHORT = 128         # vectors up to this long keep one term per entry (128 experts' counts)


@dataclass(frozen=True)
class IndexVector:
    """An index vector: `entries` (one term per entry) when short and known, else `value`
    (a function of the entry position p). `source` names the tensor it was loaded from;
    `coord(p)` is the entry's coordinate there and `live(p)` says it is a real entry."""
    length: int
    entries: Optional[tuple] = None
    value: Optional[Callable] = None
    source: Optional[str] = None
    origin: Any = 0
    extent: Any = None                      # the source tensor's length
    segment: Any = None                     # the segments.Window it was loaded from
    fragment: Any = None                    # the fragment it was made of (to_indices)

    def entry(self, p):
        if self.entries is not None:
            c = concrete(p)
            if c is not None:
                return self.entries[c] if 0 <= c < self.length else 0
            out = bv(self.entries[-1])
            for i in range(self.length - 2, -1, -1):
                out = z3.If(bv(p) == i, bv(self.entries[i]), out)
            return out
        return self.value(p)

    def coord(self, p):
        return sym.add(bv(self.origin), bv(p))

    def live(self, p):
        """Entry p is a real entry of its source: inside the tensor and its segment."""
        from .segments import in_window
        if self.extent is None:
            return z3.BoolVal(True)
        c = self.coord(p)
        return z3.And(z3.ULT(c, bv(self.extent)), in_window(self.segment, c))


def values_of(w, tensor: str):
    """The entries of `tensor` as a function of the coordinate: an uninterpreted function,
    or, when a tag assumption bounds them (`assume(ids[coord(ids)[0]] < T)`), that
    function where it is below the bound and 0 elsewhere: exactly the functions whose
    values all lie below the bound, with no quantifier."""
    table = _functions(w)
    abstraction.install(w.ctx).path = lambda: w.path
    if tensor not in table:
        raw = z3.Function(tensor, z3.BitVecSort(WIDTH), z3.BitVecSort(WIDTH))
        w.__dict__.setdefault("routing_raw", {})[tensor] = raw
        bound = bounds(w).get(tensor)
        if bound is None:
            table[tensor] = raw
        else:
            zero = z3.BitVecVal(0, WIDTH)
            table[tensor] = lambda c, raw=raw, b=bv(bound): z3.If(z3.ULT(raw(c), b), raw(c), zero)
    return table[tensor]


def routing_values(w, model) -> dict:
    """The routing arrays' entries in a counterexample: every entry of a short array (the
    counts), the entries the model names of a long one (the others are its default)."""
    out = {}
    for tensor, raw in w.__dict__.get("routing_raw", {}).items():
        f = _functions(w)[tensor]
        extent = concrete(bv(w.tensors[tensor][0]))
        if extent is not None and extent <= SHORT:
            points = range(extent)
        else:
            interp = model[raw] if raw in model.decls() else None
            points = [] if interp is None else sorted(
                {value(model, a[0]) for a in interp.as_list()[:-1]})[:SHORT]
        if points:
            out[tensor] = {i: value(model, f(z3.BitVecVal(i, WIDTH))) for i in points}
    return out


def bounds(w) -> dict:
    """tensor -> the bound its entries are assumed below."""
    return w.__dict__.setdefault("routing_bounds", {})


def bound(w, op, tensor: str, limit) -> None:
    """Record `every entry of tensor < limit` (a tag assumption), before any use."""
    if tensor in _functions(w) and bounds(w).get(tensor) is None:
        w.not_modelled(op, f"a bound on the entries of {tensor} stated after they are read; "
                           f"state the routing assumptions first")
        return
    bounds(w)[tensor] = limit


def _functions(w) -> dict:
    if not hasattr(w, "routing_values"):
        w.routing_values = {}
    return w.routing_values


def indices_load(w, op: Op) -> None:
    from .values import GlobalTile
    src = w.value(op.arg("src"))
    n = op.result.type.length
    if not isinstance(src, GlobalTile) or len(src.box) != 1 or src.rows is not None:
        w.not_modelled(op, "index vectors loaded from anything but a 1-D tile")
        w.env[op.result] = None
        return
    fn = values_of(w, src.tensor)
    origin = src.origin[0]
    vec = IndexVector(n, source=src.tensor, origin=origin, extent=src.extents[0],
                      segment=src.window)
    read = lambda p: z3.If(vec.live(p), fn(vec.coord(p)), z3.BitVecVal(0, WIDTH))
    entries = None
    if n <= SHORT and concrete(origin) is not None:      # e.g. the E counts
        extent = concrete(bv(src.extents[0]))
        if extent is not None and src.window is None:    # each entry's liveness is known
            o = concrete(origin)
            entries = tuple(z3.simplify(fn(z3.BitVecVal(o + i, WIDTH))) if o + i < extent else
                            z3.BitVecVal(0, WIDTH) for i in range(n))
        else:
            entries = tuple(z3.simplify(read(i)) for i in range(n))
        if w.phase == "collect":
            for i in range(n):             # entries are below 2^24 (assumed, as sizes are)
                w.ctx.facts.append(z3.ULT(fn(z3.simplify(vec.coord(i))), VAR_LIMIT))
    w.env[op.result] = IndexVector(n, entries, read, src.tensor, origin, src.extents[0],
                                   src.window)


def prefix_sum(w, op: Op) -> bool:
    """Exclusive prefix sum of a short index vector; False when `op` is not one."""
    v = w.value(op.arg("x"))
    if not isinstance(v, IndexVector):
        return False
    if v.entries is None:
        w.not_modelled(op, f"prefix sums of index vectors longer than {SHORT}")
        w.env[op.result] = None
        return True
    out, total = [], z3.BitVecVal(0, WIDTH)
    for x in v.entries:
        out.append(total)
        total = z3.simplify(total + bv(x))
    window_families.register(w.ctx, v.entries, out, total)
    w.env[op.result] = IndexVector(v.length, tuple(out))
    return True


def round_up(w, op: Op) -> None:
    v = w.value(op.arg("v"))
    m = op.attrs["multiple"]
    if not isinstance(v, IndexVector) or v.entries is None:
        w.not_modelled(op, "round_up of an index vector the pass does not know")
        w.env[op.result] = None
        return
    w.env[op.result] = IndexVector(v.length, tuple(
        z3.simplify(z3.UDiv(bv(x) + (m - 1), m) * m) for x in v.entries))


def element(w, op: Op) -> bool:
    """Entry i of an index vector as a uniform scalar; False when `op` reads a fragment."""
    v = w.value(op.arg("v"))
    i = w.value(op.arg("i"))
    if not isinstance(v, IndexVector):
        return False
    if i is None:
        w.not_modelled(op, "an entry index the pass cannot express")
        w.env[op.result] = None
        return True
    w.env[op.result] = v.entry(i)
    return True
