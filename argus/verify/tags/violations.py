"""Reporting a violated attention invariant: solve for the smallest counterexample of a
`bad` condition and turn it into a Finding at the op, with the thread and register of the
fragment it is about (rows of a row vector are named by a thread of the tile that holds
them)."""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

import z3

from argus.ir.nodes import Op, Value
from argus.verify.finding import ElementTag, Finding
from argus.verify.smt import holds, value

from . import report

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


def atom_of(layout: str | None) -> str | None:
    """The TV atom of a fragment layout (rows(L) -> L), or None."""
    if not layout:
        return None
    inner = layout[5:-1] if layout.startswith("rows(") and layout.endswith(")") else layout
    return inner if report.tv_atom(inner) is not None else None


@lru_cache(maxsize=None)
def _holders(atom: str) -> dict:
    tv = report.tv_atom(atom)
    rows, cols = tv.coord_table()
    out: dict = {}
    for t in range(tv.threads):
        for v in range(tv.values):
            out.setdefault((int(rows[t][v]), int(cols[t][v])), (t, v))
    return out


def locate(atom: str, pr: int, pc: int, rows: int | None = None):
    """(thread in the warpgroup, register, cell) of the register that holds element
    (pr, pc) of a `rows`-row fragment tiled by the atom (the atom repeats over the tile,
    register v of repeat (i, j) is v + values * (i + reps_rows * j); the lowest thread
    holding it)."""
    tv = report.tv_atom(atom)
    tr, tc = tv.tile
    cell = (pr % tr, pc % tc)
    t, v = _holders(atom)[cell]
    reps = max(1, (rows or tr) // tr)
    return t, v + tv.values * (pr // tr + reps * (pc // tc)), cell


def refute(w, op: Op, check: str, bad, *, layout=None, rows=None, cols=None, message,
           hint: str, elements=None, extra=(), loc=None, severity: str = "error"):
    """Report `check` if `bad` holds for some element (pr < rows, pc < cols), block, step
    and size. The solver works on positions; the counterexample names the thread and
    register of the fragment's layout that hold the element (found in the atom's table).
    `message` and `elements` take the model and an instantiation (the identity: terms are
    over positions). Returns the model, or None when `bad` cannot hold."""
    atom = atom_of(layout)
    pr, pc = w.pos["pr"], w.pos["pc"]
    if rows is None and atom is not None:
        rows = report.tv_atom(atom).tile[0]
    bounds = [z3.ULT(pr, rows)] if rows is not None else []
    if cols is not None:
        bounds.append(z3.ULT(pc, cols))
    bounds += list(extra)
    claim = bad if not isinstance(bad, bool) else z3.BoolVal(bad)
    if z3.is_false(z3.simplify(claim)) or holds(w.ctx, z3.Not(claim), [*w.path, *bounds],
                                                in_integers=True):
        return None
    scope = w.scope_vars()
    model = report.find(w, claim, scope, bounds)
    if model is None:
        return None
    wg = report.warpgroup_of(w, model)
    base = wg * 128 if wg is not None else 0
    cex = report.counterexample(w, model, scope, warpgroup=wg,
                                elements=tuple(elements(model, _same)) if elements else ())
    if atom is not None:
        at = (value(model, pr), value(model, pc) if cols is not None else 0)
        t, v, cell = locate(atom, *at, rows)
        cex = replace(cex, thread=base + t, warp=(base + t) // 32, lane=(base + t) % 32,
                      register=v, layout=atom, cell=cell)
    w.report(Finding(check, severity, message(model, _same), loc or op.loc, dsl_name(op), hint,
                     cex))
    return model


def _same(x):
    return x


def element(model, inst, name, index, actual: dict, expected: dict) -> ElementTag:
    return ElementTag(name, tuple(value(model, inst(i)) for i in index),
                      {k: value(model, inst(x)) for k, x in actual.items()},
                      {k: value(model, inst(x)) for k, x in expected.items()})
