"""Elementwise math on fragments, register by register, from the op table.

Every math op's one-element C expression is its OpSpec's `cuda` template
(argus/ir/ops/math.py); this module only brings the operands to the result's registers:
a fragment of the same layout is read register for register, a row vector (a rows(...)
layout) from the register of the same thread that holds the row, a scalar as is. Values
live in fp32 registers whatever their dtype, rounded to it after every op (bf16/fp16 to
nearest even, int32 toward zero), exactly as the interpreter holds them; predicates are
1.0 / 0.0.
"""

from __future__ import annotations

from argus.ir import OPS, spec_of
from argus.ir.ops.math import INTEGER, POLY
from argus.ir.types import DType, FragmentType

from ..errors import CodegenError
from ..registers import register_layout, row_slots
from ..values import Fragment, Scalar

V = "argus_v"
CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def round_to(dtype: DType, text: str) -> str:
    """C expression of `text` (a float) rounded to `dtype` and held as float."""
    if dtype == DType.bf16:
        return f"argus::round_bf16({text})"
    if dtype == DType.fp16:
        return f"argus::round_f16({text})"
    if dtype == DType.int32:
        return f"(float)(int)({text})"
    return text


def declare(ctx, value, op) -> Fragment:
    """A new register array for the fragment `value` (an op result)."""
    t = value.type
    layout = register_layout(t.layout, tuple(t.shape))
    name = ctx.em.name(value.name)
    ctx.em.line(f"float {name}[{layout.values}];  // {t.dtype} {tuple(t.shape)} {t.layout}")
    frag = Fragment(name, t.dtype, tuple(t.shape), t.layout, layout.values,
                    accumulator=id(value) in ctx.accumulators)
    ctx.bind(value, frag)
    ctx.fragments.append(frag)
    return frag


def operand(ctx, op, x, out: Fragment) -> str:
    """C expression of operand x at register V of the fragment `out`."""
    v = ctx.get(x, op)
    if isinstance(v, Scalar):
        return f"(float)({v.expr})"
    if not isinstance(v, Fragment):
        raise CodegenError(f"{op.opcode} of a {type(v).__name__}; elementwise math takes "
                           "register fragments and scalars", op.loc)
    if v.cast is not None:
        v = materialize(ctx, op, v)
    dst = register_layout(out.layout, out.shape)
    src = register_layout(v.layout, v.shape)
    if v.shape == out.shape and src.same_as(dst):
        return v.reg(V)
    if len(v.shape) == 1 and len(out.shape) == 2 and v.shape[0] == out.shape[0]:
        return v.reg(row_slots(dst, src, V))
    raise CodegenError(f"{op.opcode} combines a fragment of layout {v.layout} {v.shape} with "
                       f"one of layout {out.layout} {out.shape}", op.loc,
                       f"convert_layout one side to {out.layout} first")


def materialize(ctx, op, frag: Fragment) -> Fragment:
    """A deferred cast (rounded only at its store) as registers of its own."""
    name = ctx.em.name(f"{frag.name}_{frag.cast}")
    ctx.em.line(f"float {name}[{frag.count}];  // {frag.name} rounded to {frag.cast}")
    out = Fragment(name, frag.cast, frag.shape, frag.layout, frag.count)
    each(ctx, out, round_to(frag.cast, frag.reg(V)))
    return out


def each(ctx, out: Fragment, text: str) -> None:
    """out[v] = text for every register v (an unrolled loop)."""
    ctx.em.line("#pragma unroll")
    ctx.em.line(f"for (int {V} = 0; {V} < {out.count}; ++{V}) {out.reg(V)} = {text};")


def _template(op) -> str:
    spec = spec_of(op.opcode)
    if spec.cuda is None:
        raise CodegenError(f"the op table gives {op.opcode} no C expression", op.loc)
    return spec.cuda


def _names(op):
    return [o.name for o in spec_of(op.opcode).operands]


def _math(ctx, op):
    if not isinstance(op.result.type, FragmentType):
        raise CodegenError(f"{op.opcode} of scalars only", op.loc)
    out = declare(ctx, op.result, op)
    args = {n: operand(ctx, op, x, out) for n, x in zip(_names(op), op.operands)}
    text = _template(op).format(**args)
    every = op.attrs.get("poly_every")
    if every:
        # one register in n on the FP32 units: V is constant in the unrolled loop, so the
        # choice is made at compile time, register by register
        poly = POLY.get(op.opcode.split(".", 1)[1])
        if poly is None or not isinstance(every, int) or every < 1:
            raise CodegenError(f"{op.opcode} has poly_every={every!r}; only "
                               f"{', '.join(sorted(POLY))} take it, as an int >= 1", op.loc)
        text = f"(({V}) % {every} == {every - 1} ? {poly.format(**args)} : {text})"
    if out.dtype == DType.int32 and op.opcode.split(".", 1)[1] in INTEGER:
        # + - * max min neg abs of integers held in fp32 (exact below 2^24, the documented
        # range) are integers already: no truncation (an F2I and an I2F per register)
        each(ctx, out, text)
        return
    each(ctx, out, round_to(out.dtype, text))


def _cmp(ctx, op):
    out = declare(ctx, op.result, op)
    lhs, rhs = (operand(ctx, op, op.arg(n), out) for n in ("lhs", "rhs"))
    pred = op.attrs["pred"]
    if pred not in CMP:
        raise CodegenError(f"unknown comparison {pred!r}", op.loc)
    each(ctx, out, f"(({lhs}) {CMP[pred]} ({rhs}) ? 1.0f : 0.0f)")


def _select(ctx, op):
    out = declare(ctx, op.result, op)
    cond, a, b = (operand(ctx, op, op.arg(n), out) for n in ("cond", "a", "b"))
    each(ctx, out, round_to(out.dtype, f"(({cond}) != 0.0f ? ({a}) : ({b}))"))


def _coord(ctx, op):
    out = declare(ctx, op.result, op)
    layout = register_layout(out.layout, out.shape)
    each(ctx, out, f"(float)({layout.coord(int(op.attrs['axis']), V)})")


def _consumers(ctx, value):
    """The ops after the current one (in its block, regions included) that read `value`."""
    stack = list(ctx.following)
    while stack:
        later = stack.pop()
        if any(x is value for x in later.operands):
            yield later
        for region in later.regions:
            stack.extend(region.ops)


DEFERRED = ("store", "tma.store", "atomic.add", "frag.slice", "tag.assert", "tag.assume",
            "tag.heads")
# the ops that write a register fragment in place, and the operand they write
WRITES_IN_PLACE = {"frag.assign": "dst", "wgmma.mma": "acc"}


def _cast(ctx, op):
    src = ctx.get(op.arg("x"), op)
    dtype = op.attrs["dtype"]
    dtype = dtype if isinstance(dtype, DType) else DType[str(dtype)]
    if not isinstance(src, Fragment):
        raise CodegenError("cast of a non-fragment value", op.loc)
    later = list(_consumers(ctx, op.result))
    accumulator = src.layout.startswith("wgmma_acc_m64n")
    stored = accumulator and all(u.opcode in DEFERRED for u in later)
    if dtype.bits == 16 and later and (stored or all(_feeds_register_a(ctx, u) for u in later)):
        # an accumulator rounded only at its store: one cvt per register pair there, no
        # second array; valid while the accumulator is not written before the last use
        for u in ctx.following:
            written = WRITES_IN_PLACE.get(u.opcode)
            if written is not None and ctx.values.get(id(u.arg(written))) is src:
                raise CodegenError("the accumulator is written again while its cast is still "
                                   "in use; store the cast value before updating the "
                                   "accumulator", op.loc)
        ctx.bind(op.result, Fragment(src.name, src.dtype, src.shape, src.layout, src.count,
                                     cast=dtype, first=src.first))
        return
    out = declare(ctx, op.result, op)
    each(ctx, out, round_to(dtype, operand(ctx, op, op.arg("x"), out)))


def _feeds_register_a(ctx, use) -> bool:
    """`use` is a convert_layout into wgmma's register-A layout read only as a wgmma's A
    operand: the cast can wait for the wgmma's packing (cvt.rn.bf16x2.f32 / f16x2 rounds
    each fp32 value to nearest even, what round_bf16 / round_f16 then the pack give), one
    cvt per register pair instead of a rounding per register and then the pack."""
    if use.opcode != "frag.convert" or use.attrs.get("layout") != "wgmma_a_rs_16bit":
        return False
    readers = list(_consumers(ctx, use.result))
    return bool(readers) and all(r.opcode == "wgmma.mma" and r.arg("a") is use.result and
                                 all(x is not use.result for n, x in _other_args(r))
                                 for r in readers)


def _other_args(op):
    return [(i, x) for i, x in enumerate(op.operands) if x is not op.arg("a")]


def _assign(ctx, op):
    dst, src = ctx.get(op.arg("dst"), op), op.arg("src")
    if not isinstance(dst, Fragment):
        raise CodegenError("assign into a value that is not a register fragment", op.loc)
    each(ctx, dst, round_to(dst.dtype, operand(ctx, op, src, dst)))


# every math op of the table with a one-element C expression lowers through _math (the
# arith ops' expressions are scalar ones: lower/arith.py)
RULES = {s.opcode: _math for s in OPS.values() if s.family == "math" and s.cuda is not None}
RULES.update({"math.cmp": _cmp, "math.select": _select, "frag.coord": _coord,
              "math.cast": _cast, "frag.assign": _assign})
