"""Plain global memory through any fragment layout, index vectors, row gathers and scatters,
segments of tensors (the routing of an MoE layer).

At the (row, col) the layout gives each register (argus.codegen.registers): loads read 0
outside the tensor (or the segment), stores drop what falls outside, and a replicated
layout (rows(...)) stores from one holder of each element. Where a layout keeps runs of W
row neighbours in consecutive registers (the blocked layout's vectors, the accumulator's
pairs), each run moves with the widest access (argus_vector.cuh: LDG/STG of 16, 8 or 4
bytes) for which the view is aligned (the pointer, the row pitch and the box's first
column, checked once at run time: uniform branches) when the whole run is inside the box;
a run on the edge, or a view with an odd pitch, moves element by element.
Index vectors are uniform: a short one (at most INLINE entries) is read into a register
array where it is loaded, a longer one is read entry by entry where it is used.
"""

from __future__ import annotations

from argus.ir import gather_chunks
from argus.ir.types import DType
from argus.limits import WARPGROUP_THREADS

from ..errors import CodegenError
from ..registers import LANE, register_layout
from ..values import (C_ELEMENT, Fragment, GlobalTile, IndexVector, LaneIndices, SmemTile,
                      TensorParam)
from .elementwise import declare, materialize
from .exchange import element_of_fragment, prefix_sum_fragment

INLINE = 16
READ = {DType.fp32: "{p}", DType.bf16: "argus::from_bf16({p})", DType.fp16: "argus::from_f16({p})",
        DType.int32: "(float)({p})"}
PACK = {DType.bf16: "argus::pack_bf16x2", DType.fp16: "argus::pack_f16x2"}   # two per word
WRITE = {DType.fp32: "{x}", DType.bf16: "argus::to_bf16({x})", DType.fp16: "argus::to_f16({x})",
         DType.int32: "(int)({x})"}


def _read(dtype, ref, loc):
    if dtype not in READ:
        raise CodegenError(f"loads of {dtype} into registers are not generated", loc)
    return READ[dtype].format(p=ref)


def _write(dtype, x, loc):
    if dtype not in WRITE:
        raise CodegenError(f"stores of {dtype} from registers are not generated", loc)
    return WRITE[dtype].format(x=x)


def _row_elems(t: TensorParam) -> str:
    out = "1"
    for d in t.shape[1:]:
        out = str(d) if out == "1" else f"{out} * {d}"
    return out


def _box_access(tile: GlobalTile, layout, v: str):
    """(in-bounds condition, element offset) of register v of `layout` in `tile`."""
    t = tile.tensor
    if len(tile.box) == 1:
        i = f"({tile.origin[0]} + {layout.coord(0, v)})"
        return f"{i} < {t.shape[0]}", f"(long long){i}"
    if len(tile.box) != 2 or len(t.shape) != 2:
        raise CodegenError(f"a {len(tile.box)}-D box is not generated (1-D and 2-D are)")
    r = f"({tile.origin[0]} + {layout.coord(0, v)})"
    c = f"({tile.origin[1]} + {layout.coord(1, v)})"
    return f"{r} < {t.shape[0]} && {c} < {t.shape[1]}", f"(long long){r} * {t.shape[1]} + {c}"


def _vector_width(tile: GlobalTile, layout) -> int:
    """The run length W that this box's accesses use (1: element by element)."""
    if len(tile.box) not in (1, 2) or C_ELEMENT.get(tile.tensor.dtype) is None:
        return 1
    return layout.vector()


def _aligned(tile: GlobalTile, e: int) -> str:
    """The run-time condition for accesses of E elements at every multiple of E in the box
    to be aligned: the pointer, the row pitch and the box's first column."""
    t = tile.tensor
    parts = [f"argus::vector_aligned<{e}>({t.pointer})", f"({tile.origin[-1]}) % {e} == 0"]
    if len(tile.box) == 2:
        parts.append(f"({t.shape[1]}) % {e} == 0")
    return " && ".join(parts)


def _access_tiers(tile: GlobalTile, w: int, widest: int = 16) -> list[int]:
    """The access widths (elements) a run of W can take, widest first: W elements or 16
    bytes, halving down to 2 elements; a view aligned only for a narrower access takes
    that one instead of falling back to single elements."""
    e = min(w, max(1, widest // (tile.tensor.dtype.bits // 8)))
    tiers = []
    while e >= 2:
        tiers.append(e)
        e //= 2
    return tiers


def _inside(tile: GlobalTile, layout) -> str:
    """The uniform condition for this thread's whole part of the box to lie inside the
    tensor (threads that hold nothing of a small layout excluded)."""
    t = tile.tensor
    parts = [f"({o}) + {b} <= {n}" for o, b, n in zip(tile.origin, tile.box, t.shape)]
    held = layout.held_guard()
    return " && ".join(([held] if held else []) + parts)


def _runs(ctx, tile: GlobalTile, layout, count: int, w: int, vector, scalar, widest=16):
    """The runs of W registers: vector(v, offset, e) (the run in accesses of E elements)
    where the run is whole and the view aligned for E (the widest E that is), scalar(v)
    (element by element, v an expression) where neither holds. A box wholly inside the
    tensor and aligned for the widest access (the common case) takes a straight line of
    accesses with no per-run test, so the compiler issues them all before any is used."""
    em = ctx.em
    tiers = _access_tiers(tile, w, widest)
    flags = []
    for e in tiers:
        flags.append(em.name(f"argus_vec{e}"))
        em.line(f"const bool {flags[-1]} = {_aligned(tile, e)};  // accesses of {e} elements")
    last_ok, _ = _box_access(tile, layout, f"(argus_v + {w - 1})")
    _, first_at = _box_access(tile, layout, "argus_v")
    em.open(f"if ({_inside(tile, layout)} && {flags[0]})", "the whole box, widest accesses")
    em.line("#pragma unroll")
    em.open(f"for (int argus_v = 0; argus_v < {count}; argus_v += {w})")
    vector("argus_v", first_at, tiers[0])
    em.close()
    em.close()
    em.open("else", "on the tensor's edge or a narrower alignment: run by run")
    em.line("#pragma unroll")
    em.open(f"for (int argus_v = 0; argus_v < {count}; argus_v += {w})")
    em.line(f"const bool argus_whole = {last_ok};")
    for i, (e, flag) in enumerate(zip(tiers, flags)):
        em.open(f"{'else ' if i else ''}if (argus_whole && {flag})")
        vector("argus_v", first_at, e)
        em.close()
    em.open("else")
    em.line("#pragma unroll")
    em.open(f"for (int argus_i = 0; argus_i < {w}; ++argus_i)")
    scalar("(argus_v + argus_i)")
    em.close()
    em.close()
    em.close()
    em.close()


def load(ctx, op):
    src = ctx.get(op.arg("src"), op)
    if isinstance(src, SmemTile):
        raise CodegenError("load from shared memory into registers is not generated; use "
                           "ldmatrix, or wgmma on the shared-memory tile", op.loc)
    if not isinstance(src, GlobalTile):
        raise CodegenError("load reads a global tile", op.loc)
    out = declare(ctx, op.result, op)
    if tuple(src.box) != out.shape:
        raise CodegenError(f"load of a box {src.box} into a fragment of shape {out.shape}",
                           op.loc)
    layout = register_layout(out.layout, out.shape)
    t = src.tensor
    em = ctx.em
    w = _vector_width(src, layout)
    if w == 1:
        ok, at = _box_access(src, layout, "argus_v")
        ref = _read(t.dtype, f"{t.pointer}[{at}]", op.loc)
        em.line("#pragma unroll")
        em.line(f"for (int argus_v = 0; argus_v < {out.count}; ++argus_v) "
                f"{out.reg('argus_v')} = ({ok}) ? {ref} : 0.0f;")
        return

    element = C_ELEMENT[t.dtype]

    def vector(v, at, e):
        em.line("#pragma unroll")
        em.open(f"for (int argus_c = 0; argus_c < {w}; argus_c += {e})")
        em.line(f"const argus::Vec<{e}, {element}> argus_e = "
                f"argus::load_vec<{e}>({t.pointer} + {at} + argus_c);")
        em.line("#pragma unroll")
        em.line(f"for (int argus_i = 0; argus_i < {e}; ++argus_i) "
                f"argus_raw[{v} + argus_c + argus_i] = argus_e.e[argus_i];")
        em.close()

    def scalar(v):
        ok, at = _box_access(src, layout, v)
        em.line(f"argus_raw[{v}] = ({ok}) ? {t.pointer}[{at}] : ({element})0;")

    # the raw elements first, converted once all are loaded (a conversion next to each
    # load would wait for it before the next load is issued)
    em.open("", f"load {out.layout}: runs of {w} by the widest aligned access")
    em.line(f"{element} argus_raw[{out.count}];")
    _runs(ctx, src, layout, out.count, w, vector, scalar)
    em.line("#pragma unroll")
    em.line(f"for (int argus_v = 0; argus_v < {out.count}; ++argus_v) "
            f"{out.reg('argus_v')} = {_read(t.dtype, 'argus_raw[argus_v]', op.loc)};")
    em.close()


def store_global(ctx, op, dst: GlobalTile, src: Fragment):
    """A fragment of any layout into a global tile. A deferred cast (an accumulator cast to
    16 bits) rounds as it is written; 16-bit runs are packed two values per 32-bit word."""
    t = dst.tensor
    value_dtype = src.cast or src.dtype
    if value_dtype != t.dtype:
        raise CodegenError(f"storing a {value_dtype} fragment into a {t.dtype} tensor; "
                           f"cast it first: cast(x, {t.dtype})", op.loc)
    if src.cast is not None and src.cast not in WRITE:
        src = materialize(ctx, op, src)
    if tuple(dst.box) != src.shape:
        raise CodegenError(f"store of a {src.shape} fragment into a box {dst.box}", op.loc)
    layout = register_layout(src.layout, src.shape)
    em = ctx.em
    guard = layout.owner_guard()
    w = _vector_width(dst, layout)
    em.open(f"if ({guard})" if guard else "", f"store {src.layout}" +
            (f": runs of {w} by the widest aligned access" if w > 1 else ""))
    def scalar(v):
        ok, at = _box_access(dst, layout, v)
        em.line(f"if ({ok}) {t.pointer}[{at}] = {_write(t.dtype, src.reg(v), op.loc)};")

    if w == 1:
        em.line("#pragma unroll")
        em.open(f"for (int argus_v = 0; argus_v < {src.count}; ++argus_v)")
        scalar("argus_v")
        em.close()
    else:
        def vector(v, at, e):
            em.line("#pragma unroll")
            em.open(f"for (int argus_c = 0; argus_c < {w}; argus_c += {e})")
            reg = lambda i: src.reg(f"{v} + argus_c + {i}")      # noqa: E731
            if t.dtype in PACK:
                em.line(f"argus::Vec<{e // 2}, argus::u32> argus_e;")
                em.line("#pragma unroll")
                em.line(f"for (int argus_i = 0; argus_i < {e // 2}; ++argus_i) "
                        f"argus_e.e[argus_i] = {PACK[t.dtype]}({reg('2 * argus_i')}, "
                        f"{reg('2 * argus_i + 1')});")
                em.line(f"argus::store_vec<{e // 2}>("
                        f"reinterpret_cast<argus::u32*>({t.pointer} + {at} + argus_c), argus_e);")
            else:
                em.line(f"argus::Vec<{e}, {C_ELEMENT[t.dtype]}> argus_e;")
                em.line("#pragma unroll")
                em.line(f"for (int argus_i = 0; argus_i < {e}; ++argus_i) argus_e.e[argus_i] = "
                        f"{_write(t.dtype, reg('argus_i'), op.loc)};")
                em.line(f"argus::store_vec<{e}>({t.pointer} + {at} + argus_c, argus_e);")
            em.close()

        _runs(ctx, dst, layout, src.count, w, vector, scalar)
    em.close()


def atomic_global(ctx, op, dst: GlobalTile, src: Fragment):
    """red.global.add of a fp32 fragment of any layout into a fp32 global tile; register
    pairs that are column neighbours add as one red.v2 where aligned."""
    if dst.tensor.dtype != DType.fp32 or src.cast is not None or src.dtype != DType.fp32:
        raise CodegenError(f"atomic_add into {dst.tensor.dtype} is not generated; add fp32 "
                           "values into an fp32 tensor", op.loc)
    if tuple(dst.box) != src.shape:
        raise CodegenError(f"atomic_add of a {src.shape} fragment into a box {dst.box}", op.loc)
    layout = register_layout(src.layout, src.shape)
    t = dst.tensor
    guard = layout.owner_guard()
    em = ctx.em
    w = min(2, _vector_width(dst, layout))
    em.open(f"if ({guard})" if guard else "", "red.global.add of each element" +
            (", column pairs as one red.v2" if w == 2 else ""))
    def scalar(v):
        ok, at = _box_access(dst, layout, v)
        em.line(f"if ({ok}) argus::red_add_f32({t.pointer} + {at}, {src.reg(v)});")

    if w == 1:
        em.line("#pragma unroll")
        em.open(f"for (int argus_v = 0; argus_v < {src.count}; ++argus_v)")
        scalar("argus_v")
        em.close()
    else:
        def vector(v, at, e):
            em.line(f"argus::red_add_f32x2({t.pointer} + {at}, {src.reg(v)}, "
                    f"{src.reg(f'{v} + 1')});")

        _runs(ctx, dst, layout, src.count, w, vector, scalar, widest=8)
    em.close()


# ---- index vectors ----------------------------------------------------------------------

def _array(ctx, op, length: int, fill) -> IndexVector:
    """An index vector held in a register array, entry i = fill(i) (i an unrolled constant)."""
    name = ctx.em.name(op.result.name)
    ctx.em.line(f"int {name}[{length}];")
    ctx.em.line("#pragma unroll")
    ctx.em.line(f"for (int argus_i = 0; argus_i < {length}; ++argus_i) "
                f"{name}[argus_i] = {fill('argus_i')};")
    vec = IndexVector(length, lambda i, n=name: f"{n}[{i}]", array=name)
    ctx.bind(op.result, vec)
    return vec


def _indices_load(ctx, op):
    tile = ctx.get(op.arg("src"), op)
    if not isinstance(tile, GlobalTile) or len(tile.box) != 1:
        raise CodegenError("load_indices reads a 1-D tile of an int32 tensor", op.loc)
    if tile.tensor.dtype != DType.int32:
        raise CodegenError(f"index vectors are int32; this tensor is {tile.tensor.dtype}",
                           op.loc)
    n = tile.box[0]
    origin = ctx.em.name(f"{op.result.name}_first")
    ctx.em.line(f"const int {origin} = {tile.origin[0]};")
    ptr, extent = tile.tensor.pointer, tile.tensor.shape[0]

    def entry(i):
        return f"(({origin} + {i}) < {extent} ? {ptr}[{origin} + {i}] : 0)"
    if n <= INLINE:
        _array(ctx, op, n, entry)
    elif n <= WARPGROUP_THREADS:
        # a long vector is read entry by entry where it is used; the entry a warpgroup
        # gather's thread needs (the index of its warp's row, gather_chunks.index_row) is
        # also read here once: inside the gather's k-loop that load's latency would be in
        # every step (a 64-row decode tile: one L2 round trip a k-step, before the copies)
        lane = ctx.em.name(f"{op.result.name}_lane")
        if gather_chunks.splits(n):
            ctx.em.line(f"const int {lane} = {entry(gather_chunks.index_row(LANE, n))};")
            ctx.bind(op.result, IndexVector(n, entry, lane=lane))
        else:
            ctx.bind(op.result, IndexVector(n, entry))
    else:
        ctx.bind(op.result, IndexVector(n, entry))


def _vector(ctx, op, x) -> IndexVector:
    v = ctx.get(x, op)
    if isinstance(v, IndexVector):
        return v
    if isinstance(v, Fragment):
        layout = register_layout(v.layout, v.shape)
        n = v.shape[0]
        if layout.whole_in_every_thread():
            v = materialize(ctx, op, v) if v.cast is not None else v
            return IndexVector(n, lambda i, f=v: f"(int)({f.reg(i)})", aliases=v)
    if isinstance(v, (Fragment, LaneIndices)):
        layout = v.layout if isinstance(v, Fragment) else v.fragment.layout
        raise CodegenError(f"{op.opcode} reads every entry of its index vector in every "
                           f"thread, but a fragment of layout {layout} is spread over the "
                           "threads (only a scatter of values of the same layout takes it)",
                           op.loc, "convert_layout(x, \"rows(blocked)\") first")
    raise CodegenError(f"{op.opcode} takes an index vector", op.loc)


def _prefix_sum(ctx, op):
    if not isinstance(ctx.get(op.arg("x"), op), IndexVector):
        prefix_sum_fragment(ctx, op)
        return
    src = _vector(ctx, op, op.arg("x"))
    name = ctx.em.name(op.result.name)
    em = ctx.em
    em.line(f"int {name}[{src.length}];  // exclusive prefix sum")
    em.line(f"{name}[0] = 0;")
    em.line("#pragma unroll")
    em.line(f"for (int argus_i = 1; argus_i < {src.length}; ++argus_i) "
            f"{name}[argus_i] = {name}[argus_i - 1] + {src.element('argus_i - 1')};")
    ctx.bind(op.result, IndexVector(src.length, lambda i, n=name: f"{n}[{i}]", array=name))


def _round_up(ctx, op):
    src = _vector(ctx, op, op.arg("v"))
    m = int(op.attrs["multiple"])
    _array(ctx, op, src.length,
           lambda i: f"(({src.element(i)} + {m - 1}) / {m}) * {m}")


def _from_frag(ctx, op):
    v = ctx.get(op.arg("x"), op)
    if isinstance(v, Fragment) and len(v.shape) == 1 and \
            not register_layout(v.layout, v.shape).whole_in_every_thread():
        v = materialize(ctx, op, v) if v.cast is not None else v
        ctx.bind(op.result, LaneIndices(v))     # per thread: a same-layout scatter reads it
        return
    ctx.bind(op.result, _vector(ctx, op, op.arg("x")))


def element_is_snapshot(ctx, op) -> bool:
    """An indices.element op reads a value fixed when its vector was made: a global tile or
    a register array of the vector's own, not a fragment's registers (a vector made by
    to_indices of a fragment every thread holds reads them in place, so an assign to the
    fragment changes it) nor a fragment read through shared memory (which synchronises)."""
    v = ctx.get(op.arg("v"), op)
    return not isinstance(v, Fragment) and getattr(v, "aliases", None) is None


def _element(ctx, op):
    v = ctx.get(op.arg("v"), op)
    i = ctx.expr(op.arg("i"), op)
    if isinstance(v, Fragment) and len(v.shape) == 1 and \
            not register_layout(v.layout, v.shape).whole_in_every_thread():
        element_of_fragment(ctx, op, v, i)       # from its holder, through shared memory
        return
    vec = _vector(ctx, op, op.arg("v"))
    ctx.scalar(op, "int", vec.element(i))


# ---- segments, gathers, scatters --------------------------------------------------------

def _segment(ctx, op):
    tensor = ctx.get(op.arg("tensor"), op)
    if not isinstance(tensor, TensorParam):
        raise CodegenError("segment of a value that is not a global tensor", op.loc)
    start, rows = ctx.expr(op.arg("start"), op), ctx.expr(op.arg("rows"), op)
    s_name = ctx.em.name(f"{op.result.name}_start")
    n_name = ctx.em.name(f"{op.result.name}_rows")
    ctx.em.line(f"const int {s_name} = {start}, {n_name} = {rows};  // segment of "
                f"{tensor.name}")
    pointer = f"({tensor.pointer} + (long long)({s_name}) * {_row_elems(tensor)})"
    ctx.bind(op.result, TensorParam(f"{tensor.name}_seg", tensor.dtype,
                                    (n_name, *tensor.shape[1:]), pointer, tensor, s_name))


def _gather_load(ctx, op):
    tensor = ctx.get(op.arg("src"), op)
    rows = _vector(ctx, op, op.arg("rows"))
    col = ctx.expr(op.arg("col"), op)
    cols = int(op.attrs["cols"])
    out = declare(ctx, op.result, op)
    if len(tensor.shape) != 2 or out.shape != (rows.length, cols):
        raise CodegenError(f"gather of {rows.length} rows x {cols} columns into a fragment "
                           f"of shape {out.shape}", op.loc)
    layout = register_layout(out.layout, out.shape)
    n, ld = tensor.shape
    em = ctx.em
    em.line("#pragma unroll")
    em.open(f"for (int argus_v = 0; argus_v < {out.count}; ++argus_v)", "gathered rows")
    em.line(f"const int argus_row = {rows.element(layout.coord(0, 'argus_v'))};")
    em.line(f"const int argus_col = ({col}) * {cols} + {layout.coord(1, 'argus_v')};")
    ref = _read(tensor.dtype, f"{tensor.pointer}[(long long)argus_row * {ld} + argus_col]",
                op.loc)
    em.line(f"{out.reg('argus_v')} = (argus_row >= 0 && argus_row < {n} && argus_col < {ld})"
            f" ? {ref} : 0.0f;")
    em.close()


def _scatter_store(ctx, op):
    tensor = ctx.get(op.arg("dst"), op)
    col = ctx.expr(op.arg("col"), op)
    src = ctx.get(op.arg("src"), op)
    if src.cast is not None:
        src = materialize(ctx, op, src)
    if src.dtype != tensor.dtype:
        raise CodegenError(f"scatter of a {src.dtype} fragment into a {tensor.dtype} tensor; "
                           "cast it first", op.loc)
    layout = register_layout(src.layout, src.shape)
    row_of = _scatter_rows(ctx, op, layout)
    guard = layout.owner_guard()
    n = tensor.shape[0]
    em = ctx.em
    em.open(f"if ({guard})" if guard else "", "scattered rows")
    em.line("#pragma unroll")
    em.open(f"for (int argus_v = 0; argus_v < {src.count}; ++argus_v)")
    em.line(f"const int argus_row = {row_of('argus_v')};")
    value = _write(tensor.dtype, src.reg("argus_v"), op.loc)
    if len(tensor.shape) == 1:
        if len(src.shape) != 1:
            raise CodegenError("scatter into a 1-D tensor takes a 1-D fragment", op.loc)
        em.line(f"if (argus_row >= 0 && argus_row < {n}) {tensor.pointer}[argus_row] = {value};")
    else:
        ld = tensor.shape[1]
        em.line(f"const int argus_col = ({col}) * {src.shape[1]} + {layout.coord(1, 'argus_v')};")
        em.line(f"if (argus_row >= 0 && argus_row < {n} && argus_col < {ld}) "
                f"{tensor.pointer}[(long long)argus_row * {ld} + argus_col] = {value};")
    em.close()
    em.close()


def _scatter_rows(ctx, op, layout):
    """C expression of the row of the value in register v (a function of v): from a uniform
    index vector, its entry at that register's row; from the indices of a spread fragment
    (LaneIndices) of the values' own layout, the thread's register v of it."""
    rows = ctx.get(op.arg("rows"), op)
    if not isinstance(rows, LaneIndices):
        vec = _vector(ctx, op, op.arg("rows"))
        return lambda v: vec.element(layout.coord(0, v))
    f = rows.fragment
    if not register_layout(f.layout, f.shape).same_as(layout):
        raise CodegenError(f"a scatter whose indices ({f.layout} over {f.shape}) and values "
                           f"({layout.name} over {layout.shape}) are spread over the threads "
                           "differently", op.loc, "compute both in one layout")
    return lambda v: f"(int)({f.reg(v)})"


GATHER_BATCH = 16      # row indices a gather reads ahead of its TMA boxes (registers)


def _gather_tma(ctx, op):
    dst = ctx.get(op.arg("dst"), op)
    tensor = ctx.get(op.arg("src"), op)
    rows = _vector(ctx, op, op.arg("rows"))
    col = ctx.expr(op.arg("col"), op)
    bar = ctx.get(op.arg("bar"), op)
    if not isinstance(dst, SmemTile) or not isinstance(tensor, TensorParam):
        raise CodegenError("gather_tma copies rows of a global tensor into a shared tile",
                           op.loc)
    g = dst.geometry
    if rows.length != g.rows:
        raise CodegenError(f"gather of {rows.length} rows into a tile of {g.rows}", op.loc)
    root = tensor.root
    if tensor is not root:
        raise CodegenError("gather_tma from a segment is not generated; gather from the "
                           "tensor (the indices name its rows)", op.loc)
    w = g.chunk_cols if g.swizzle != "none" else g.cols
    tmap = ctx.tensor_map(root, (w, 1), g.swizzle)
    em = ctx.em
    # the row indices of a batch are read before its boxes are issued: each TMA issue is
    # ordered after every earlier memory access, so reading one index per box would put the
    # index's load latency before every box (~130 cycles a row on the H200)
    batch = next(b for b in (GATHER_BATCH, 8, 4, 2, 1) if g.rows % b == 0)
    em.open(f"for (int argus_r0 = 0; argus_r0 < {g.rows}; argus_r0 += {batch})",
            f"one TMA box of one row per gathered row, {batch} rows a batch (rows outside "
            "the tensor read zeros)")
    em.line(f"int argus_rows[{batch}];")
    em.line("#pragma unroll")
    em.line(f"for (int argus_j = 0; argus_j < {batch}; ++argus_j) "
            f"argus_rows[argus_j] = {rows.element('argus_r0 + argus_j')};")
    em.line("#pragma unroll")
    em.open(f"for (int argus_j = 0; argus_j < {batch}; ++argus_j)")
    for j in range(g.chunks):
        addr = (f"{dst.address} + {j * g.chunk_stride} + (argus_r0 + argus_j + {g.row0}) * "
                f"{g.span}")
        first = f"({col}) * {g.cols}" + (f" + {j * w}" if j else "")
        em.line(f"argus::tma_load<2>({addr}, &{tmap}, {bar.address}, "
                f"{{{first}, argus_rows[argus_j]}});")
    em.close()
    em.close()


RULES = {"load": load, "indices.load": _indices_load, "scan.prefix_sum": _prefix_sum,
         "indices.round_up": _round_up, "indices.from_frag": _from_frag,
         "indices.element": _element, "segment": _segment, "gather.load": _gather_load,
         "scatter.store": _scatter_store, "gather.tma": _gather_tma}
