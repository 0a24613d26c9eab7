"""Tag assumptions, `assume(tag(x).field == expr)`: facts about the tags of a tensor's
elements that the kernel takes as given, e.g. what the router guarantees (the rows of the
segment of expert e were routed to e) or a layout convention (row r of the flattened
(E, N, K) weights belongs to expert r // N; entry j*T + t of a per-choice array belongs
to token t).

Each assumption defines `field` of tensor X on a *region* of X's coordinates (the whole
tensor, a segment or a tile), with a value over the coordinates and scalars. Loops around
it are enumerated (their counters must be those of short constant loops, `for e in
range(E)`), so each (loop values, region) becomes one instance. The field of element c of
X is then the if-then-else chain over the instances whose region holds c, and outside
every region an uninterpreted function of c (nothing is known there). No quantifier
reaches z3.

If instances overlap (the assumptions contradict each other for some inputs), the first
one wins: more inputs are checked than the assumptions allow, which can only add
counterexamples, never hide one.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import z3

from argus.ir import tagexpr as T
from argus.ir.nodes import Op
from argus.verify.query_limits import SMALL_TRIP
from argus.verify.smt import VAR_LIMIT, WIDTH, bv

from . import abstraction, routing, scalars, window_families
from .segments import Segment, in_window
from .values import GlobalTile

COORDS = tuple(z3.BitVec(f"coord#{a}", WIDTH) for a in range(2))
MAX_INSTANCES = 256
COORDINATE_FIELDS = ("row", "col")


@dataclass(frozen=True)
class Instance:
    region: object        # z3 Bool over COORDS
    value: object         # term over COORDS
    loc: object


class Unsupported(Exception):
    pass


def _table(w) -> dict:
    if not hasattr(w, "tag_assumptions"):
        w.tag_assumptions = {}       # (tensor, field) -> [Instance]
    return w.tag_assumptions


def fields(w, tensor: str) -> list[str]:
    """The fields that tag assumptions define for `tensor`, in the order first assumed."""
    return [f for (t, f) in _table(w) if t == tensor]


def field(w, tensor: str, name: str, coords):
    """Field `name` of element `coords` (terms) of `tensor`. A field that no assumption
    defines through the column (the usual: a row's expert, token, choice) is a function of
    the row alone."""
    instances = _table(w).get((tensor, name), [])
    coords = [bv(c) for c in coords] + [z3.BitVecVal(0, WIDTH)] * (2 - len(coords))
    if not any(_uses_column(i) for i in instances):
        coords[1] = z3.BitVecVal(0, WIDTH)
    fallback = z3.Function(f"{tensor}.{name}", z3.BitVecSort(WIDTH), z3.BitVecSort(WIDTH),
                           z3.BitVecSort(WIDTH))
    out = fallback(*coords)
    pairs = list(zip(COORDS, coords))
    for inst in reversed(instances):
        out = z3.If(z3.substitute(inst.region, *pairs), z3.substitute(bv(inst.value), *pairs),
                    out)
    return out


def _uses_column(inst: Instance) -> bool:
    cache = inst.__dict__.setdefault("_column", [])
    if not cache:
        cache.append(_mentions(inst.region, COORDS[1]) or _mentions(bv(inst.value), COORDS[1]))
    return cache[0]


def _mentions(t, var, seen=None) -> bool:
    seen = set() if seen is None else seen
    if t.get_id() in seen:
        return False
    seen.add(t.get_id())
    if t.eq(var):
        return True
    return any(_mentions(c, var, seen) for c in t.children())


def tag_assume(w, op: Op) -> None:
    try:
        parts = _conjuncts(op.attrs["pred"])
        vals = [w.value(o) for o in op.args("values")]
        loops = _enumerated(w)
        found, bounded = [], []
        for part in parts:
            b = _entry_bound(w, part, vals)
            if b is not None:
                if loops or w.path:
                    raise Unsupported("a bound on a routing array's entries inside a loop or "
                                      "an if (state it once, at the top of the kernel)")
                bounded.append(b)
            else:
                found.append(_definition(w, part, vals))
    except Unsupported as why:
        w.not_modelled(op, str(why))
        return
    if w.phase != "collect":
        return
    for tensor, limit in bounded:
        routing.bound(w, op, tensor, limit)
    names = [n for n, _ in loops]
    terms = [w.ctx.vars[n].term for n in names]
    values = list(product(*[range(b) for _, b in loops]))
    for tensor, name, region, value, subject in found:
        table = _table(w).setdefault((tensor, name), [])
        _windows(w)[(tensor, name)] = _over_windows(w, loops, terms, subject, value, table)
        family = _windows(w)[(tensor, name)]
        for combo in values:
            pairs = [(t, z3.BitVecVal(c, WIDTH)) for t, c in zip(terms, combo)]
            if family is not None and family.kind == "prefix":
                # the window's start and rows at counter c are entry c's (no need to walk
                # the if-then-else over every entry's sum, 128 times over)
                c = combo[0]
                pairs = [(bv(subject.start), family.sum.sums[c]),
                         (bv(subject.rows), family.sum.parts[c]), *pairs]
            sub = (lambda x: z3.simplify(z3.substitute(x, *pairs))) if pairs else z3.simplify
            table.append(Instance(sub(region), sub(bv(value)), op.loc))


def _conjuncts(pred) -> list:
    if isinstance(pred, T.BinExpr) and pred.op == "and":
        return _conjuncts(pred.lhs) + _conjuncts(pred.rhs)
    return [pred]


def _enumerated(w) -> list[tuple[str, int]]:
    """The loop counters around the assumption and their constant trip counts."""
    out = []
    for name in w.scope_vars():
        bound = w.ctx.small.get(w.ctx.vars[name].term.sexpr())
        if bound is None:
            raise Unsupported(f"a tag assumption inside the loop over "
                              f"{w.ctx.vars[name].name}, which is not a short constant loop "
                              f"(range(n) with a constant n <= {SMALL_TRIP})")
        out.append((name, bound))
    total = 1
    for _, b in out:
        total *= b
    if total > MAX_INSTANCES:
        raise Unsupported(f"a tag assumption under loops of {total} iterations in all "
                          f"(at most {MAX_INSTANCES} are enumerated)")
    return out


def _entry_bound(w, part, vals):
    """(tensor, limit) of `ids[coord(ids)[0]] < limit` (every entry below limit), else None."""
    if not isinstance(part, T.BinExpr) or part.op not in ("<", ">"):
        return None
    lookup, limit = (part.lhs, part.rhs) if part.op == "<" else (part.rhs, part.lhs)
    if not (isinstance(lookup, T.Lookup) and isinstance(lookup.index, T.CoordOf)
            and lookup.index.operand == lookup.operand and lookup.index.axis == 0):
        return None
    tensor = vals[lookup.operand]
    return tensor[1], _render(w, limit, vals, None)


def _definition(w, part, vals):
    """(tensor, field, region over COORDS, value over COORDS) of `tag(x).f == expr`."""
    if not (isinstance(part, T.BinExpr) and part.op == "=="):
        raise Unsupported(f"the tag assumption {part}: only tag(x).field == expr (joined by "
                          f"`and`) is modelled")
    lhs, rhs = part.lhs, part.rhs
    if not isinstance(lhs, T.TagField):
        lhs, rhs = rhs, lhs
    if not isinstance(lhs, T.TagField):
        raise Unsupported(f"the tag assumption {part} names no tag(x).field")
    if lhs.field in COORDINATE_FIELDS:
        raise Unsupported(f"tag(x).{lhs.field} is the element's coordinate; an assumption "
                          f"cannot redefine it")
    x = vals[lhs.operand]
    tensor, region = _region(w, x)
    value = _render(w, rhs, vals, lhs.operand)
    region = z3.And(region, *[scalars.as_bool(p) for p in w.path])
    return tensor, lhs.field, region, value, x


def _region(w, x):
    # a tensor or a segment is whole rows: the region says which rows (a row's routing
    # field is the same in every column inside the tensor)
    if isinstance(x, tuple) and x and x[0] == "tensor":
        return x[1], z3.ULT(COORDS[0], bv(w.tensors[x[1]][0]))
    if isinstance(x, Segment):
        return x.tensor, z3.And(z3.ULT(COORDS[0], bv(x.extents[0])),
                                in_window(x, COORDS[0]))
    if isinstance(x, GlobalTile) and x.rows is None:
        box = [z3.And(z3.UGE(c, bv(o)), z3.ULT(c - bv(o), b))
               for c, o, b in zip(COORDS, x.origin, x.box)]
        return x.tensor, z3.And(*box, *[z3.ULT(c, bv(e)) for c, e in zip(COORDS, x.extents)],
                                in_window(x, COORDS[0]))
    raise Unsupported("a tag assumption about something other than a kernel tensor, a "
                      "segment or a tile of one")


def _render(w, e, vals, subject):
    if isinstance(e, T.Const):
        return e.value
    if isinstance(e, T.ScalarRef):
        v = vals[e.operand]
        if v is None or isinstance(v, float) or not (isinstance(v, int) or z3.is_bv(v)):
            raise Unsupported("a scalar in the tag assumption that the pass cannot express")
        return v
    if isinstance(e, T.CoordOf):
        if e.operand != subject:
            raise Unsupported("coord() of another value in a tag assumption")
        return COORDS[e.axis]
    if isinstance(e, T.Lookup):
        tensor = vals[e.operand]
        return routing.values_of(w, tensor[1])(bv(_render(w, e.index, vals, subject)))
    if isinstance(e, T.BinExpr):
        name = {"+": "add", "-": "sub", "*": "mul", "//": "floordiv", "%": "mod"}.get(e.op)
        if name is None:
            raise Unsupported(f"the operator {e.op} in the value of a tag assumption")
        return scalars.binary(w.ctx, name, _render(w, e.lhs, vals, subject),
                              _render(w, e.rhs, vals, subject))
    raise Unsupported(f"{e} in the value of a tag assumption")


def _windows(w) -> dict:
    """(tensor, field) -> its Family when its instances are one assumption's over a family
    of disjoint windows (else None)."""
    if not hasattr(w, "tag_windows"):
        w.tag_windows = {}
    return w.tag_windows


@dataclass(frozen=True)
class Family:
    """`tag(segment(X, start(g), rows(g))).f == value(g)` for g over a whole loop of n:
    windows that are disjoint for different g, so that on member a's window the field is
    value(a). `kind` "prefix": entry g's window of an exclusive prefix sum (`sum`);
    "affine": rows g * R .. g * R + R - 1 (`rows` R, the same for every g)."""
    kind: str
    counter: object
    length: int
    value: object
    sum: object = None
    rows: object = None
    by_coord: bool = False      # the value is a term over the element's coordinates


def _over_windows(w, loops, terms, subject, value, table):
    """The Family of a tag assumption under one short loop with no `if` around it, on a
    segment indexed by the loop's counter, no earlier instance of the field, and a value
    that does not depend on the element; else None."""
    if table or len(loops) != 1 or w.path or not isinstance(subject, Segment):
        return None
    by_coord = _mentions(bv(value), COORDS[0]) or _mentions(bv(value), COORDS[1])
    counter, n = terms[0], loops[0][1]
    s = window_families.member_of(w.ctx, subject.start, subject.rows, counter)
    if s is not None:
        return Family("prefix", counter, n, value, sum=s, by_coord=by_coord) \
            if n == s.length else None
    factors = window_families.product_of(w.ctx, subject.start)
    if factors is not None and factors[0].eq(counter) and factors[1].eq(bv(subject.rows)) \
            and not _mentions(bv(subject.rows), counter):
        return Family("affine", counter, n, value, rows=bv(subject.rows), by_coord=by_coord)
    return None


def _by_windows(w, tensor: str, name: str, window):
    """value(a) when `window` is member a's window of the field's Family, a < n, and the
    window inside the tensor: each of its rows is in instance a's region and in no other
    (the windows are disjoint), so the field there is value(a); else None."""
    got = _member(w, tensor, name, window)
    if got is None or got[0].by_coord:
        return None
    family, index = got
    return z3.simplify(z3.substitute(bv(family.value), (family.counter, bv(index))))


def on_window(w, tensor: str, name: str, window, coords):
    """Field `name` of the element at `coords` (terms; a row of `window`) when `window` is a
    member's window of the field's Family (a constant value or one over the coordinates):
    that member's value there, with no if-then-else over the other members; else None."""
    got = _member(w, tensor, name, window) if window is not None else None
    if got is None:
        return None
    family, index = got
    coords = [bv(c) for c in coords] + [z3.BitVecVal(0, WIDTH)] * (2 - len(coords))
    return z3.simplify(z3.substitute(bv(family.value), (family.counter, bv(index)),
                                     *zip(COORDS, coords)))


def _member(w, tensor: str, name: str, window):
    """(the field's Family, a) when `window` is member a's window, a < n, inside the
    tensor; else None."""
    family = _windows(w).get((tensor, name))
    if family is None or len(_table(w).get((tensor, name), ())) != family.length:
        return None
    extent = bv(w.tensors[tensor][0])
    if family.kind == "prefix":
        got = window_families.window_of(w.ctx, window.start, window.rows)
        if got is None or got[0] is not family.sum:
            return None
        index, inside = got[1], z3.ULE(family.sum.total, extent)
    else:
        got = window_families.product_of(w.ctx, window.start)
        if got is None or not got[1].eq(family.rows) or not bv(window.rows).eq(family.rows):
            return None
        index, inside = got[0], z3.ULE(bv(window.end), extent)
    if not window_families.below(w.ctx, index, family.length) or \
            not window_families.inside(w.ctx, inside):
        return None
    return family, index


def constant_on(w, tensor: str, name: str, window, rank: int):
    """The value field `name` takes on every element of the segment `window` of `tensor`
    (all its rows, every column), when it is one value there; else None. Proved once per
    segment in integers: for all x < rows and every column, field(start + x, col) ==
    field(start, 0)."""
    if window is None:
        return None
    cache = w.__dict__.setdefault("constant_fields", {})
    start, rows = bv(window.start), bv(window.rows)
    key = (tensor, name, start.get_id(), rows.get_id())   # the cache keeps both alive
    if key not in cache:
        by_windows = _by_windows(w, tensor, name, window)
        if by_windows is not None:
            cache[key] = ((start, rows), by_windows)
            return by_windows
        x, c = z3.BitVecs("x#seg c#seg", WIDTH)
        first = field(w, tensor, name, (window.start, 0)[:rank])
        coords = (bv(window.start) + x, c)[:rank]
        inside = [z3.ULT(x, bv(window.rows))]
        if rank == 2:
            inside.append(z3.ULT(c, bv(w.tensors[tensor][1])))
        claim = z3.Implies(z3.And(*inside), field(w, tensor, name, coords) == first)
        rows_max = abstraction.upper_bound(w.ctx, bv(window.rows))   # x < rows <= this
        proved = abstraction.install(w.ctx).refutes(
            [z3.ULT(x, rows_max + 1), z3.ULT(c, VAR_LIMIT), z3.Not(claim)], abstract=False)
        cache[key] = ((start, rows), first if proved else None)
    return cache[key][1]
