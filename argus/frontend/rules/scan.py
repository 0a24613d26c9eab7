"""Rules for device-side routing: element(), to_indices(), round_up() and segment()
(prefix_sum itself is a math rule)."""

from __future__ import annotations

from argus.ir.types import INDEX, DType, FragmentType, GlobalTensorType, IndexVectorType

from .base import Args, describe, rule

SEGMENT_ROWS = "?"   # a segment's row count is a runtime scalar (the op's `rows` operand)


def _index_vector(a: Args, name: str = "v"):
    x = a.get(name)
    hint = "build one with load_indices(tile(counts, (E,), (0,))) or prefix_sum(...)"
    if hasattr(x, "type") and isinstance(x.type, FragmentType):
        hint = "routing counts live in index vectors: load_indices(...) a 1-D int32 tile"
    return a.value(name, IndexVectorType, what="an index vector", hint=hint)


def _int_vector(a: Args, name: str = "x"):
    x = a.value(name, FragmentType, what="a 1-D int32 fragment",
                hint="cast(x, int32) a 1-D fragment first")
    if len(x.type.shape) != 1 or x.type.dtype != DType.int32:
        a.fail(name, f"needs a 1-D int32 fragment, got {x.type}",
               "cast(x, int32) a 1-D fragment (e.g. a row vector from row_sum) first")
    return x


@rule("element")
def element(fx, a: Args):
    v = a.get("v")
    if hasattr(v, "type") and isinstance(v.type, FragmentType):
        v = _int_vector(a, "v")
        length = v.type.shape[0]
    else:
        v = _index_vector(a)
        length = v.type.length
    i = a.scalar("i")
    if isinstance(i, float):
        a.fail("i", f"the index must be an integer, got {i!r}")
    if isinstance(i, int) and not 0 <= i < length:
        a.fail("i", f"index {i} is out of range for {describe(v)} of {length} entries",
               f"use 0..{length - 1}")
    return fx.emit("indices.element", (v, i), a.call, INDEX)


@rule("to_indices")
def to_indices(fx, a: Args):
    x = _int_vector(a)
    return fx.emit("indices.from_frag", (x,), a.call, IndexVectorType(x.type.shape[0]))


@rule("round_up")
def round_up(fx, a: Args):
    v = _index_vector(a)
    multiple = a.static_int("multiple", minimum=1)
    return fx.emit("indices.round_up", (v,), a.call, v.type, {"multiple": multiple})


@rule("segment")
def segment(fx, a: Args):
    x = a.get("x")
    if not (hasattr(x, "type") and isinstance(x.type, GlobalTensorType)):
        a.fail("x", f"can take rows of a global tensor, not {describe(x)}",
               "segment a kernel parameter such as X: Tensor[\"T\", \"K\", bf16]")
    start, rows = a.scalar("start"), a.scalar("rows")
    for name, v in (("start", start), ("rows", rows)):
        if isinstance(v, float):
            a.fail(name, f"{name} must be an integer, got {v!r}")
        if isinstance(v, int) and v < 0:
            a.fail(name, f"{name} must be >= 0, got {v}")
    extent = x.type.shape[0]
    if isinstance(extent, int) and isinstance(start, int) and isinstance(rows, int) \
            and start + rows > extent:
        a.fail("rows", f"rows [{start}, {start + rows}) are outside {x.name}, which has "
               f"{extent} rows", "keep start + rows within the tensor")
    t = GlobalTensorType((SEGMENT_ROWS, *x.type.shape[1:]), x.type.dtype)
    return fx.emit("segment", (x, start, rows), a.call, t)
