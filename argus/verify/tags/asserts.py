"""tag_assert: the user's relation, discharged for every element, thread, block and step.

The predicate (argus.ir.tagexpr) is rendered to z3 over the positions of the element in
the operands (all of one shape) and the scope; `tag(x).f` is field f of x's tag,
`coord(x)[a]` the element's coordinate a (global for a global tile), `tag(x).tensor` the
tensor x was loaded from (origin.py; a kernel tensor named in the predicate is that
tensor). A predicate that
names a field the pass does not know, or a value whose tag is unknown, is reported as a
warning (not discharged), never as proved."""

from __future__ import annotations

import z3

from argus.ir import tagexpr as T
from argus.ir.nodes import Op
from argus.verify.finding import Finding
from argus.verify.smt import bv, holds, value

from . import assumptions, countsort, origin, report, routing, scalars
from .meet import LIVE
from .values import Fragment, GlobalTile, SmemView


class Undischarged(Exception):
    pass


def tag_assert(w, op: Op) -> None:
    if w.phase != "check":
        return
    vals = [w.value(o) for o in op.args("values")]    # the predicate's operand i is vals[i]
    pred = op.attrs["pred"]
    text = op.attrs.get("text", str(pred))
    frags = [v for v in vals if isinstance(v, Fragment)]
    layout = frags[0].layout if frags else None
    if layout and layout.startswith("rows(") and layout.endswith(")"):
        layout = layout[5:-1]         # a row vector's rows: named by a thread of its tile
    shape = next((tuple(v.shape) for v in vals if isinstance(v, (Fragment, SmemView))),
                 next((v.box for v in vals if isinstance(v, GlobalTile)), ()))
    leaves: dict[str, object] = {}
    try:
        claim = _render(w, pred, vals, leaves)
    except Undischarged as why:
        w.report(Finding("tag.assert-undischarged", "warning",
                         f"tag_assert({text}) is not verified: {why}", op.loc, "tag_assert",
                         "the verifier proves tag asserts over loads, TMA/wgmma data and "
                         "casts; see docs/design/verifier.md"))
        return
    sub = report.thread_vars(w, layout) if layout else None
    pr, pc = w.pos["pr"], w.pos["pc"]
    if sub is not None:
        pairs, t, v, bounds = sub
        inst = lambda x: z3.substitute(x, *pairs)
    else:
        bounds = [z3.ULT(pr, shape[0]), z3.ULT(pc, shape[1])] if len(shape) == 2 else \
            [z3.ULT(pr, shape[0])] if len(shape) == 1 else []
        inst = lambda x: x
    claim = scalars.as_bool(claim)
    live = next((f.tag.fields[LIVE] for f in frags if LIVE in f.tag.fields), None)
    if live is not None:      # padding rows are data of no one (padding.py checks them)
        claim = z3.Implies(bv(live) == 1, claim)
    claim = inst(claim)
    if holds(w.ctx, claim, [*w.path, *bounds], in_integers=True):
        return
    scope = w.scope_vars()
    model = report.find(w, z3.Not(claim), scope, bounds)
    if model is None:
        return
    actual = {k: inst(bv(x)) for k, x in leaves.items() if k.startswith("tag")}
    expected = {k: inst(bv(x)) for k, x in leaves.items() if not k.startswith("tag")}
    idx = (inst(bv(pr)), inst(bv(pc)))
    wg = w.role.warpgroup if w.role else None
    cex = report.counterexample(w, model, scope, layout=layout, warpgroup=wg,
                                thread_base=wg * 128 if wg is not None else 0,
                                elements=(report.element(model, _name(op, vals), idx, actual, expected),))
    shown = ", ".join(f"{k} = {origin.shown(w, k, value(model, x))}"
                      for k, x in {**actual, **expected}.items())
    w.report(Finding("tag.assert", "error",
                     f"tag_assert({text}) fails: {shown}", op.loc,
                     "tag_assert", "the data does not land where the assertion says: check "
                     "the tile coordinates of the loads and of the destination", cex))


def _name(op, vals) -> str:
    """The SSA name of the first fragment the assertion names (its element is reported)."""
    for o, v in zip(op.args("values"), vals):
        if isinstance(v, Fragment):
            return o.name
    return "element"


def _render(w, e, vals, leaves):
    pr, pc = w.pos["pr"], w.pos["pc"]
    if isinstance(e, T.Const):
        return e.value
    if isinstance(e, T.ScalarRef):
        v = vals[e.operand]
        if isinstance(v, tuple) and v[0] == "tensor":        # a kernel tensor: its code
            x = origin.code(w, v[1])
            leaves[f"tensor {v[1]}"] = x
            return x
        if v is None or isinstance(v, (Fragment, GlobalTile, SmemView, float)):
            raise Undischarged("a scalar operand is not known")
        return v
    if isinstance(e, T.TagField) and e.field == "tensor":
        name = origin.tensor_of(w, vals[e.operand])
        if name is None:
            raise Undischarged("tag().tensor names the one tensor a value was loaded from; "
                               "this one " + origin.why_no_tensor(w, vals[e.operand]))
        x = origin.code(w, name)
        leaves["tag.tensor" if "tag.tensor" not in leaves else f"tag.tensor #{e.operand}"] = x
        return x
    if isinstance(e, T.TagField):
        v = vals[e.operand]
        if isinstance(v, Fragment):
            if v.tag.state != "data":
                raise Undischarged(v.tag.why_unknown or "the value carries no data tag")
            if e.field not in v.tag.fields:
                raise Undischarged(f"its tag has no field {e.field!r} "
                                   f"(fields: {', '.join(v.tag.fields) or 'none'})")
            leaves[f"tag.{e.field}"] = v.tag.fields[e.field]
            return v.tag.fields[e.field]
        if isinstance(v, GlobalTile) and e.field in ("row", "col"):
            axis = 0 if e.field == "row" else 1
            x = bv(v.origin[axis]) + (pr if axis == 0 else pc)
            leaves[f"tag.{e.field}"] = x
            return x
        if isinstance(v, GlobalTile) and e.field in assumptions.fields(w, v.tensor):
            x = assumptions.field(w, v.tensor, e.field,
                                  [bv(o) + p for o, p in zip(v.origin, (pr, pc))])
            leaves[f"tag.{e.field}"] = x
            return x
        raise Undischarged(f"tag() of this operand is not modelled")
    if isinstance(e, T.ValueOf):
        from .meaning import IndexVal, PredVal
        v = vals[e.operand]
        m = v.tag.meaning if isinstance(v, Fragment) else None
        counted = countsort.meaning(v) if isinstance(v, Fragment) else None
        if m is None and isinstance(counted, countsort.Val):   # an integer vector's value
            m = IndexVal(bv(counted.term))
        if not isinstance(m, (IndexVal, PredVal)):
            raise Undischarged("only index and predicate fragments (row_of, col_of, "
                               "comparisons) and integer vectors of a counting sort have "
                               "a modelled value")
        leaves[f"value[{e.operand}]"] = z3.If(m.term, z3.BitVecVal(1, 64), z3.BitVecVal(
            0, 64)) if isinstance(m, PredVal) else m.term
        return m.term
    if isinstance(e, T.CoordOf):
        v = vals[e.operand]
        p = pr if e.axis == 0 else pc
        if isinstance(v, GlobalTile):
            x = bv(v.origin[e.axis]) + p
        elif isinstance(v, Fragment):
            x = p
        elif isinstance(v, SmemView):
            x = bv(v.offset[e.axis]) + p
        else:
            raise Undischarged("coord() of this operand is not modelled")
        leaves[f"coord[{e.axis}]"] = x
        return x
    if isinstance(e, T.Lookup):
        v = vals[e.operand]
        if not (isinstance(v, tuple) and v[0] == "tensor"):
            raise Undischarged("a routing array that is not a kernel tensor")
        index = _render(w, e.index, vals, leaves)
        x = routing.values_of(w, v[1])(bv(index))
        leaves[f"{v[1]}[{e.index}]"] = x
        return x
    if isinstance(e, T.BinExpr):
        a, b = _render(w, e.lhs, vals, leaves), _render(w, e.rhs, vals, leaves)
        name = {"+": "add", "-": "sub", "*": "mul", "//": "floordiv", "%": "mod", "==": "eq",
                "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "and": "land",
                "or": "lor"}[e.op]
        return scalars.binary(w.ctx, name, a, b)
    raise Undischarged(f"the expression {e} is not modelled")


def values_named(w) -> set:
    """The IR values whose value (not only their tags) some tag_assert of the kernel
    states: `tag_assert(v == coord(src)[0] - j * T)` names v's value."""
    got = w.__dict__.get("_values_named")
    if got is None:
        got = set()
        for op in w.kernel.walk():
            if op.opcode == "tag.assert":
                operands = op.args("values")
                for e in _walk_expr(op.attrs["pred"]):
                    if isinstance(e, T.ValueOf):
                        got.add(id(operands[e.operand]))
        w._values_named = got
    return got


def _walk_expr(e):
    yield e
    for child in (getattr(e, "lhs", None), getattr(e, "rhs", None), getattr(e, "index", None)):
        if child is not None:
            yield from _walk_expr(child)
