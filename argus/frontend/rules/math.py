"""Rules for elementwise math, reductions, scans, conversions and coordinate intrinsics."""

from __future__ import annotations

import ast

import numpy as np

from argus import lang
from argus.ir.nodes import Value
from argus.ir.ops import OPS
from argus.ir.ops.math import POLY, REDUCTIONS, UNARY
from argus.ir.types import DType, FragmentType, IndexVectorType, ScalarType

from .base import Args, describe, rule
from .memory import check_layout

SURFACE = lang.surface_functions()


def _is_frag(x) -> bool:
    return isinstance(x, Value) and isinstance(x.type, FragmentType)


def broadcast(fx, node, op: str, x, y) -> FragmentType:
    """The result type of an elementwise op: same shapes, a row vector (shape (rows,)) against
    a 2-D fragment, or a scalar against anything."""
    frags = [v for v in (x, y) if _is_frag(v)]
    for v in (x, y):
        ok = _is_frag(v) or (isinstance(v, (int, float)) and not isinstance(v, bool)) or (
            isinstance(v, Value) and isinstance(v.type, ScalarType))
        if not ok:
            raise fx.error(node, f"{op}: cannot combine {describe(v)} elementwise",
                           "elementwise math works on register fragments and scalars; "
                           "load() or ldmatrix() a tile first")
    full = max(frags, key=lambda v: len(v.type.shape)).type
    for v in frags:
        s = v.type.shape
        if s != full.shape and not (len(s) == 1 and s[0] == full.shape[0]):
            raise fx.error(node, f"wrong shapes for {op}: {frags[0].type.shape} and "
                           f"{frags[-1].type.shape}",
                           "operands must have equal shapes, or one be a row vector "
                           "(e.g. row_max(x)) of the other's rows")
    tiles = [v for v in frags if len(v.type.shape) > 1]
    layouts = {v.type.layout for v in tiles}
    if len(layouts) > 1:
        raise fx.error(node, f"layout mismatch for {op}: {' and '.join(sorted(layouts))}",
                       "registers combine thread by thread: convert_layout(x, \""
                       f"{tiles[0].type.layout}\") the other operand first")
    for v in frags:
        inner = v.type.layout[5:-1] if v.type.layout.startswith("rows(") else None
        if len(v.type.shape) == 1 and tiles and inner and not _rows_fit(inner,
                                                                        tiles[0].type.layout):
            raise fx.error(node, f"layout mismatch for {op}: the row vector's {v.type.layout} "
                           f"rows are not held by the threads of {tiles[0].type.layout}",
                           "reduce the tile you broadcast over (row_max(x) against x), or "
                           "convert_layout one side first")
    dtypes = {v.type.dtype for v in frags}
    if len(dtypes) > 1:
        raise fx.error(node, f"dtype mismatch for {op}: {' and '.join(sorted(map(str, dtypes)))}",
                       "cast() one side first")
    return full


def _rows_fit(inner: str, tile_layout: str) -> bool:
    """Do the threads of `tile_layout` hold the rows a rows(inner) vector keeps? (every
    thread holds every row of rows(blocked); the accumulators of all N share their rows)"""
    acc = "wgmma_acc_m64n"
    return inner in ("blocked", tile_layout) or (inner.startswith(acc)
                                                 and tile_layout.startswith(acc))


def elementwise(fx, node, op: str, x, y, pred: bool = False):
    t = broadcast(fx, node, op, x, y)
    if pred:
        t = FragmentType(t.shape, DType.pred, t.layout)
        return fx.emit("math.cmp", (x, y), node, t, {"pred": op})
    return fx.emit(f"math.{op}", (x, y), node, t)


def _frag(a: Args, name: str = "x") -> Value:
    return a.value(name, FragmentType, what="a register fragment")


@rule("maximum")
def maximum(fx, a: Args):
    return _min_max(fx, a, "max")


@rule("minimum")
def minimum(fx, a: Args):
    return _min_max(fx, a, "min")


def _min_max(fx, a: Args, op: str):
    x, y = a.get("a"), a.get("b")
    if not (_is_frag(x) or _is_frag(y)):
        return fx.binop(op, a.scalar("a"), a.scalar("b"), a.call)
    return elementwise(fx, a.call, op, x, y)


def unary(fx, a: Args, name: str, operand: str = "x", attrs: dict | None = None):
    """The unary op `math.<name>` of the op table applied to argument `operand`: a float
    fragment (or an int32 one, for the ops the table marks integer) keeps its type (computed
    in fp32, rounded to its dtype); a compile-time number folds through the table's
    semantics (rounded to fp32, as the device computes it)."""
    spec = OPS[f"math.{name}"]
    x = a.get(operand)
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        if isinstance(x, int) and spec.integer:
            return int(spec.semantics(x))
        with np.errstate(all="ignore"):
            return float(spec.semantics(np.float32(x)))
    x = _frag(a, operand)
    if not (x.type.dtype.is_float or (spec.integer and x.type.dtype == DType.int32)):
        takes = "float or int32 fragments" if spec.integer else "float fragments"
        a.fail(operand, f"{a.fn} of {x.type.dtype}: {a.fn} takes {takes}",
               f"cast to fp32 first: {a.fn}(cast({_arg_text(a, operand)}, fp32))")
    return fx.emit(spec.opcode, (x,), a.call, x.type, attrs or None)


def _arg_text(a: Args, name: str) -> str:
    node = a.node(name)
    return ast.unparse(node) if node is not a.call else name


def _unary_rule(name: str):
    return lambda fx, a: unary(fx, a, name)


def _poly_rule(name: str):
    """A unary op of the table with a polynomial variant (POLY): `poly_every` (one register
    in n on the FP32 units) becomes its attribute when n >= 1 (a compile-time number folds
    as any unary op)."""
    def lower(fx, a: Args):
        every = a.static_int("poly_every")
        if every < 0:
            a.fail("poly_every", f"poly_every must be 0 (every register by the table's "
                   f"expression) or n >= 1 (one register in n by the polynomial), got {every}",
                   f"e.g. {name}(x, poly_every=4): a quarter of the values on the FP32 units")
        return unary(fx, a, name, attrs={"poly_every": every} if every else None)
    return lower


# every unary op of the table that the surface declares under its own name (exp, log, ...,
# abs); neg is Python's unary minus, gelu_tanh is gelu(x, approximate="tanh")
for _name in UNARY:
    if _name in SURFACE:
        rule(_name)(_poly_rule(_name) if _name in POLY else _unary_rule(_name))


GELU = {"none": "gelu", "tanh": "gelu_tanh"}


@rule("gelu")
def gelu(fx, a: Args):
    return unary(fx, a, GELU[a.static_str("approximate", tuple(GELU))])


@rule("cast")
def cast(fx, a: Args):
    x = _frag(a)
    dtype = a.dtype("dtype")
    return fx.emit("math.cast", (x,), a.call, FragmentType(x.type.shape, dtype, x.type.layout),
                   {"dtype": str(dtype)})


@rule("select")
def select(fx, a: Args):
    cond = _frag(a, "cond")
    if cond.type.dtype != DType.pred:
        a.fail("cond", f"select needs a predicate fragment, got {cond.type}",
               "compare: select(col_of(s) <= row_of(s), s, -inf)")
    t = broadcast(fx, a.call, "select", a.get("a"), a.get("b")) if (
        _is_frag(a.get("a")) or _is_frag(a.get("b"))) else cond.type
    if t.shape != cond.type.shape:
        a.fail("cond", f"wrong shapes: condition {cond.type.shape}, values {t.shape}")
    return fx.emit("math.select", (cond, a.get("a"), a.get("b")), a.call,
                   FragmentType(t.shape, t.dtype if t.dtype != DType.pred else DType.fp32,
                                cond.type.layout))


def _row_reduce(fx, a: Args, kind: str):
    x = _frag(a)
    if len(x.type.shape) != 2:
        a.fail("x", f"row reductions take a 2-D fragment, got shape {x.type.shape}")
    t = FragmentType((x.type.shape[0],), x.type.dtype, f"rows({x.type.layout})")
    return fx.emit("reduce.row", (x,), a.call, t, {"kind": kind})


def _reduce_rule(kind: str):
    return lambda fx, a: _row_reduce(fx, a, kind)


for _kind in REDUCTIONS:          # row_max, row_min, row_sum: one per kind of the op table
    rule(f"row_{_kind}")(_reduce_rule(_kind))


@rule("prefix_sum")
def prefix_sum(fx, a: Args):
    x = a.value("x", FragmentType, IndexVectorType, what="an index vector or 1-D fragment")
    if isinstance(x.type, FragmentType) and len(x.type.shape) != 1:
        a.fail("x", f"prefix_sum takes a 1-D fragment, got shape {x.type.shape}")
    return fx.emit("scan.prefix_sum", (x,), a.call, x.type)


@rule("convert_layout")
def convert_layout(fx, a: Args):
    x = _frag(a)
    layout = check_layout(a, "layout", a.get("layout"), x.type.shape)
    return fx.emit("frag.convert", (x,), a.call, FragmentType(x.type.shape, x.type.dtype,
                   layout), {"layout": layout})


def _coord(fx, a: Args, axis: int):
    x = _frag(a)
    return fx.emit("frag.coord", (x,), a.call, FragmentType(x.type.shape, DType.int32,
                   x.type.layout), {"axis": axis})


@rule("row_of")
def row_of(fx, a: Args):
    return _coord(fx, a, 0)


@rule("col_of")
def col_of(fx, a: Args):
    return _coord(fx, a, 1)
