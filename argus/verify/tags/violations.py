"""Reporting a violated attention invariant: solve for the smallest counterexample of a
`bad` condition and turn it into a Finding at the op, with the thread and register of the
fragment it is about (rows of a row vector are named by a thread of the tile that holds
them)."""

from __future__ import annotations

import re

import z3

from argus.ir.nodes import Op, Value
from argus.verify.finding import ElementTag, Finding
from argus.verify.smt import holds, value

from . import report
from .meaning import subst

DSL_NAME = {"math.max": "maximum", "math.min": "minimum", "math.exp2": "exp2", "math.mul": "*",
            "math.add": "+", "math.sub": "-", "math.div": "/", "math.select": "select",
            "math.cmp": "comparison", "frag.convert": "convert_layout", "wgmma.mma": "wgmma",
            "frag.assign": "assign", "store": "store", "for": "for", "tag.assert": "tag_assert"}


def dsl_name(op: Op) -> str:
    if op.opcode == "reduce.row":
        return f"row_{op.attrs.get('kind', 'max')}"
    return DSL_NAME.get(op.opcode, op.opcode)


def label(v) -> str:
    """The source name of an SSA value, or 'this value' for an unnamed temporary."""
    if isinstance(v, Value):
        name = re.sub(r"\.\d+$", "", v.name)
        if not name[:1].isdigit():
            return name
    return "this value"


def thread_vars(w, layout: str):
    """report.thread_vars, computed once per layout and walker (the atom's formula)."""
    cache = w.__dict__.setdefault("_thread_vars", {})
    if layout not in cache:
        cache[layout] = report.thread_vars(w, layout)
    return cache[layout]


def instance(w, layout: str | None, rows: int | None = None, cols: int | None = None):
    """(inst, bounds, atom) for the elements of a fragment of `layout`: a TV atom (or the
    atom of a rows(...) vector) gives thread and register; otherwise positions."""
    if layout:
        inner = layout[5:-1] if layout.startswith("rows(") and layout.endswith(")") else layout
        sub = thread_vars(w, inner)
        if sub is not None:
            pairs, _, _, bounds = sub
            return (lambda x: subst(x, pairs)), list(bounds), inner
    pr, pc = w.pos["pr"], w.pos["pc"]
    bounds = []
    if rows is not None:
        bounds.append(z3.ULT(pr, rows))
    if cols is not None:
        bounds.append(z3.ULT(pc, cols))
    return (lambda x: x), bounds, None


def refute(w, op: Op, check: str, bad, *, layout=None, rows=None, cols=None, message,
           hint: str, elements=None, extra=(), loc=None, severity: str = "error"):
    """Report `check` if `bad` holds for some values of every variable (instantiated over
    the fragment's threads and registers). `message` and `elements` take the model and the
    instantiation. Returns the model, or None when `bad` cannot hold."""
    inst, bounds, atom = instance(w, layout, rows, cols)
    bounds = [*bounds, *extra]
    claim = inst(bad) if not isinstance(bad, bool) else z3.BoolVal(bad)
    if z3.is_false(z3.simplify(claim)) or holds(w.ctx, z3.Not(claim), [*w.path, *bounds]):
        return None
    scope = w.scope_vars()
    model = report.find(w, claim, scope, bounds)
    if model is None:
        return None
    wg = w.role.warpgroup if w.role else None
    cex = report.counterexample(
        w, model, scope, layout=atom, warpgroup=wg, thread_base=wg * 128 if wg is not None else 0,
        elements=tuple(elements(model, inst)) if elements else ())
    w.report(Finding(check, severity, message(model, inst), loc or op.loc, dsl_name(op), hint,
                     cex))
    return model


def element(model, inst, name, index, actual: dict, expected: dict) -> ElementTag:
    return ElementTag(name, tuple(value(model, inst(i)) for i in index),
                      {k: value(model, inst(x)) for k, x in actual.items()},
                      {k: value(model, inst(x)) for k, x in expected.items()})
