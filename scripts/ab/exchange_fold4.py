"""Ops that move values between the threads of a warpgroup: row reductions, layout
conversions and prefix sums of fragments.

Each op takes the cheapest route the two layouts allow, decided from the layout tables at
generation time:
- in registers, when every thread already holds what it needs (a conversion that only
  renames registers, like the wgmma accumulator to wgmma's register A operand);
- a butterfly of warp shuffles, when the threads that share a row differ only in a fixed
  set of lane bits (the quad of the wgmma accumulator);
- otherwise through shared memory: every thread writes its registers at their elements'
  row-major index in the warpgroup's exchange buffer, the warpgroup meets at its barrier,
  every thread reads what its result registers hold, and meets again before the buffer is
  reused. The buffer is one per warpgroup, sized for the largest exchange of the kernel and
  placed after the kernel's own shared memory; its barriers are named barriers
  EXCHANGE_BARRIER + warpgroup (the DSL leaves those ids to the compiler).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from argus.ir.types import DType
from argus.limits import COMPILER_BARRIERS, WARPGROUP_THREADS

from argus.ir.ops.math import REDUCTIONS

from ..errors import CodegenError
from ..registers import LANE, index_expr, register_layout
from .elementwise import declare, materialize, round_to

EXCHANGE_BARRIER = COMPILER_BARRIERS.start   # named barriers 12..15, one per warpgroup
# the C combine of two partials of each row reduction, from the op table
COMBINE = {kind: c.replace("{lhs}", "{a}").replace("{rhs}", "{b}")
           for kind, (_, c) in REDUCTIONS.items()}


def _source(ctx, op):
    src = ctx.get(op.arg("x"), op)     # reduce.row, frag.convert, scan.prefix_sum
    if getattr(src, "cast", None) is not None:
        src = materialize(ctx, op, src)
    return src


def _exchange_buffer(ctx, op, words: int) -> str:
    """The C address of this warpgroup's exchange buffer, at least `words` 32-bit words."""
    if ctx.kernel.launch.block > len(COMPILER_BARRIERS) * WARPGROUP_THREADS:
        raise CodegenError("the backend exchanges values through one named barrier per "
                           f"warpgroup, for at most {len(COMPILER_BARRIERS)} warpgroups; this "
                           f"block has {ctx.kernel.launch.block} threads", op.loc)
    ctx.exchange_bytes = max(ctx.exchange_bytes, 4 * words)
    return "argus_exchange"


def _sync(ctx):
    ctx.em.line(f"argus::warpgroup_sync({EXCHANGE_BARRIER} + argus_warpgroup);")


def _write_elements(ctx, src, base: str) -> None:
    layout = register_layout(src.layout, src.shape)
    guard = layout.held_guard()
    if guard:
        ctx.em.open(f"if ({guard})")
    ctx.em.line("#pragma unroll")
    ctx.em.line(f"for (int argus_v = 0; argus_v < {src.count}; ++argus_v) "
                f"argus::st_shared_f32({base} + 4 * {layout.element('argus_v')}, "
                f"{src.reg('argus_v')});")
    if guard:
        ctx.em.close()


def _shuffle_plan(src, dst):
    """(source registers per result register [W, n], lane bits to butterfly over), or None."""
    s, d = src.table, dst.table
    if s.threads != d.threads or s.threads % 32:
        return None
    lists = []
    for w in range(d.values):
        hit = s.rows == d.rows[:, w:w + 1]                    # [T, V]
        if not np.all(hit == hit[0:1]) or not hit[0].any():
            return None
        lists.append(np.nonzero(hit[0])[0])
    if len({len(x) for x in lists}) != 1:
        return None
    rowsets = [frozenset(map(int, s.rows[t])) for t in range(s.threads)]
    lanes = np.arange(s.threads)
    bits = [b for b in range(5)
            if all(rowsets[t] == rowsets[t ^ (1 << b)] for t in lanes)]
    holders = {}
    for t in lanes:
        for r in rowsets[t]:
            holders[r] = holders.get(r, 0) + 1
    if set(holders.values()) != {1 << len(bits)}:
        return None
    return np.array(lists), bits


def _fold(em, src, comb, lists, bits, var: str) -> None:
    """argus_r = the fold of registers lists[var, :] of src (in a loop over `var`, opened
    by the caller), then a butterfly over the lane bits `bits`. A chain, in register order:
    a pairwise fold (5 dependent steps for 32 registers instead of 31) was measured slower
    in the attention softmax, 1-23% with the persistent grid (H100, 2026-12-06;
    docs/perf-log.md, twentieth session): ptxas interleaves the chain with the exp2s."""
    n = lists.shape[1]
    k = 4 if n >= 8 else 1          # four interleaved chains, then a pairwise fold of them
    if k == 1:
        em.line(f"float argus_r = {src.reg(index_expr(lists[:, 0], var))};")
        if n > 1:
            at = index_expr(lists.reshape(-1), f"({var} * {n} + argus_i)")
            em.line("#pragma unroll")
            em.line(f"for (int argus_i = 1; argus_i < {n}; ++argus_i) argus_r = "
                    f"{comb.format(a='argus_r', b=src.reg(at))};")
    else:
        at = index_expr(lists.reshape(-1), f"({var} * {n} + argus_i)")
        em.line(f"float argus_t[{k}];")
        em.line("#pragma unroll")
        em.line(f"for (int argus_i = 0; argus_i < {k}; ++argus_i) argus_t[argus_i] = "
                f"{src.reg(at)};")
        em.line("#pragma unroll")
        em.line(f"for (int argus_i = {k}; argus_i < {n}; ++argus_i) argus_t[argus_i % {k}] = "
                f"{comb.format(a=f'argus_t[argus_i % {k}]', b=src.reg(at))};")
        em.line(f"argus_t[0] = {comb.format(a='argus_t[0]', b='argus_t[1]')};")
        em.line(f"argus_t[2] = {comb.format(a='argus_t[2]', b='argus_t[3]')};")
        em.line(f"float argus_r = {comb.format(a='argus_t[0]', b='argus_t[2]')};")
    for b in bits:
        em.line(f"argus_r = {comb.format(a='argus_r', b=f'argus::shfl_xor(argus_r, {1 << b})')};")


def _grouped_plan(layout):
    """(register groups [G, n], lane bits) when every thread holds whole groups of registers
    of one row each, the same register positions in every thread (row r of group g varies by
    thread), and the threads holding a row differ only in those lane bits, together holding
    each of its columns once: each thread folds its groups, a butterfly over the bits
    completes each row in all its holders. Else None."""
    t = layout.table
    rows, cols = t.rows, t.cols
    if layout.rank != 2 or t.threads % 32 or rows.shape[1] == 0 or layout.held_guard():
        return None
    first = rows[0]
    groups = []
    for r in dict.fromkeys(first.tolist()):
        groups.append(np.nonzero(first == r)[0])
    if len({len(g) for g in groups}) != 1:
        return None
    groups = np.array(groups)                                     # [G, n]
    row_of = rows[:, groups[:, 0]]                                # [T, G]
    if not np.all(rows[:, groups] == row_of[:, :, None]):         # whole groups in every thread
        return None
    if any(len(set(row_of[i].tolist())) != row_of.shape[1] for i in range(t.threads)):
        return None
    lanes = np.arange(t.threads)
    bits = [b for b in range(5) if np.array_equal(row_of[lanes ^ (1 << b)], row_of)]
    span = 1 << len(bits)
    n_cols = layout.shape[1]
    for r in range(layout.shape[0]):
        holders, where = np.nonzero(row_of == r)
        if len(holders) != span:
            return None
        lead = holders[0] & ~sum(1 << b for b in bits)
        if any((h & ~sum(1 << b for b in bits)) != lead for h in holders):
            return None
        got = np.sort(np.concatenate([cols[h, groups[g]] for h, g in zip(holders, where)]))
        if not np.array_equal(got, np.arange(n_cols)):
            return None
    return groups, bits


def _reduce_grouped(ctx, op, src, out, d_layout, plan, kind) -> None:
    """A row reduction by the grouped plan: in-thread folds, a butterfly over the lane bits
    that share rows, then each row's value from one of its holders to every thread whose
    result holds it, through the exchange buffer (one word a row)."""
    groups, bits = plan
    comb = COMBINE[kind]
    s_layout = register_layout(src.layout, src.shape)
    n_groups, n = groups.shape
    em = ctx.em
    em.open("", f"row {kind}: {n_groups} rows a thread of {n} registers, lanes xor "
                f"{[1 << b for b in bits]}, then the rows through shared memory")
    em.line(f"float argus_part[{n_groups}];")
    em.line("#pragma unroll")
    em.open(f"for (int argus_g = 0; argus_g < {n_groups}; ++argus_g)")
    _fold(em, src, comb, groups, bits, "argus_g")
    em.line("argus_part[argus_g] = argus_r;")
    em.close()
    rows = src.shape[0]
    base = _exchange_buffer(ctx, op, rows)
    mask = sum(1 << b for b in bits)
    lead = f"({LANE} & {mask}) == 0" if mask else None
    if lead:
        em.open(f"if ({lead})")
    em.line("#pragma unroll")
    row = s_layout.coord(0, index_expr(groups[:, 0], "argus_g"))
    em.line(f"for (int argus_g = 0; argus_g < {n_groups}; ++argus_g) "
            f"argus::st_shared_f32({base} + 4 * {row}, argus_part[argus_g]);")
    if lead:
        em.close()
    _sync(ctx)
    value = f"argus::ld_shared_f32({base} + 4 * {d_layout.coord(0, 'argus_w')})"
    em.line("#pragma unroll")
    em.line(f"for (int argus_w = 0; argus_w < {out.count}; ++argus_w) {out.reg('argus_w')} = "
            f"{round_to(out.dtype, value)};")
    _sync(ctx)
    em.close()


def _reduce_row(ctx, op):
    src = _source(ctx, op)
    kind = op.attrs["kind"]
    if kind not in COMBINE:
        raise CodegenError(f"unknown row reduction {kind!r}", op.loc)
    comb = COMBINE[kind]
    out = declare(ctx, op.result, op)
    s_layout = register_layout(src.layout, src.shape)
    d_layout = register_layout(out.layout, out.shape)
    plan = _shuffle_plan(s_layout, d_layout)
    em = ctx.em
    if plan is not None:
        lists, bits = plan
        n = lists.shape[1]
        em.line("#pragma unroll")
        em.open(f"for (int argus_w = 0; argus_w < {out.count}; ++argus_w)",
                f"row {kind}: {n} registers, then lanes xor {[1 << b for b in bits]}")
        _fold(em, src, comb, lists, bits, "argus_w")
        em.line(f"{out.reg('argus_w')} = {round_to(out.dtype, 'argus_r')};")
        em.close()
        return
    grouped = _grouped_plan(s_layout)
    if grouped is not None:
        _reduce_grouped(ctx, op, src, out, d_layout, grouped, kind)
        return
    rows, cols = src.shape
    base = _exchange_buffer(ctx, op, rows * cols)
    em.open("", f"row {kind} through shared memory")
    _write_elements(ctx, src, base)
    _sync(ctx)
    em.line("#pragma unroll")
    em.open(f"for (int argus_w = 0; argus_w < {out.count}; ++argus_w)")
    em.line(f"const argus::u32 argus_row = {base} + 4 * {cols} * {d_layout.coord(0, 'argus_w')};")
    em.line("float argus_r = argus::ld_shared_f32(argus_row);")
    # a row of many columns (128 experts) read in every one of the unrolled rows: a partial
    # unroll keeps the code (and the build: ~10 min fully unrolled) small
    em.line("#pragma unroll 4")
    em.line(f"for (int argus_i = 1; argus_i < {cols}; ++argus_i) argus_r = "
            f"{comb.format(a='argus_r', b='argus::ld_shared_f32(argus_row + 4 * argus_i)')};")
    em.line(f"{out.reg('argus_w')} = {round_to(out.dtype, 'argus_r')};")
    em.close()
    _sync(ctx)
    em.close()


def _convert(ctx, op):
    raw = ctx.get(op.arg("x"), op)
    deferred = getattr(raw, "cast", None)
    src = _source(ctx, op) if deferred is None or \
        op.attrs.get("layout") != "wgmma_a_rs_16bit" else raw
    out = declare(ctx, op.result, op)
    s_layout = register_layout(src.layout, src.shape)
    d_layout = register_layout(out.layout, out.shape)
    slots = d_layout.table.thread_slots(s_layout.table)
    em = ctx.em
    if slots.size and np.all(slots >= 0) and np.all(slots == slots[0:1]):
        em.line("#pragma unroll")
        em.line(f"for (int argus_v = 0; argus_v < {out.count}; ++argus_v) {out.reg('argus_v')}"
                f" = {src.reg(index_expr(slots[0], 'argus_v'))};  // registers renamed")
        if src is raw and deferred is not None:
            # still fp32: the wgmma reading it rounds to the 16-bit type as it packs
            ctx.bind(op.result, replace(out, cast=deferred))
        return
    if src is raw and deferred is not None:
        src = materialize(ctx, op, src)
    base = _exchange_buffer(ctx, op, int(np.prod(src.shape)))
    em.open("", f"{src.layout} -> {out.layout} through shared memory")
    _write_elements(ctx, src, base)
    _sync(ctx)
    em.line("#pragma unroll")
    em.line(f"for (int argus_v = 0; argus_v < {out.count}; ++argus_v) {out.reg('argus_v')} = "
            f"argus::ld_shared_f32({base} + 4 * {d_layout.element('argus_v')});")
    _sync(ctx)
    em.close()


def _contiguous_runs(layout) -> int:
    """c when every thread of the warpgroup holds the run [c*t, c*t + c) in its registers
    in order (a 1-D `blocked` vector of 128c entries), else 0."""
    rows = layout.table.rows
    if layout.rank != 1 or layout.threads != WARPGROUP_THREADS or rows.ndim != 2:
        return 0
    c = rows.shape[1]
    want = np.arange(layout.threads)[:, None] * c + np.arange(c)[None, :]
    return c if np.array_equal(rows, want) else 0


def _block_scan(ctx, op, src, out, c: int) -> None:
    """Exclusive prefix sum of an int32 vector spread in runs of c over the warpgroup: each
    thread sums its run, the warps scan those sums by shuffles, the four warp totals meet in
    the exchange buffer. Integers sum exactly in any order (|partial sums| <= 2^24, the
    int32 fragment's range), so this is the interpreter's element-order sum."""
    base = _exchange_buffer(ctx, op, WARPGROUP_THREADS // 32)
    em = ctx.em
    em.open("", f"exclusive prefix sum of runs of {c} per thread: run, warp shuffles, warps")
    em.line("float argus_run = 0.0f;")
    em.line("#pragma unroll")
    em.open(f"for (int argus_v = 0; argus_v < {c}; ++argus_v)")
    em.line(f"const float argus_x = {src.reg('argus_v')};")
    em.line(f"{out.reg('argus_v')} = argus_run;")
    em.line("argus_run += argus_x;")
    em.close()
    em.line("float argus_inc = argus_run;   // inclusive over this warp's lanes")
    em.line("#pragma unroll")
    em.open("for (int argus_o = 1; argus_o < 32; argus_o <<= 1)")
    em.line("const float argus_y = __shfl_up_sync(0xffffffffu, argus_inc, argus_o);")
    em.line(f"if (({LANE} & 31) >= argus_o) argus_inc += argus_y;")
    em.close()
    em.line(f"if (({LANE} & 31) == 31) argus::st_shared_f32({base} + 4 * ({LANE} >> 5), "
            "argus_inc);")
    _sync(ctx)
    em.line("float argus_before = argus_inc - argus_run;")
    em.line(f"for (int argus_w = 0; argus_w < ({LANE} >> 5); ++argus_w) "
            f"argus_before += argus::ld_shared_f32({base} + 4 * argus_w);")
    _sync(ctx)
    em.line("#pragma unroll")
    em.line(f"for (int argus_v = 0; argus_v < {c}; ++argus_v) {out.reg('argus_v')} = "
            f"{round_to(out.dtype, out.reg('argus_v') + ' + argus_before')};")
    em.close()


def element_of_fragment(ctx, op, src, i: str) -> None:
    """Entry i (a C int expression, uniform) of a 1-D fragment spread over the threads, as a
    uniform int scalar: its holder writes it to the exchange buffer, the warpgroup meets,
    every thread reads it."""
    from ..values import Scalar
    if src.cast is not None:
        src = materialize(ctx, op, src)
    layout = register_layout(src.layout, src.shape)
    base = _exchange_buffer(ctx, op, 1)
    name = ctx.em.name(op.result.name)
    em = ctx.em
    em.line(f"int {name};")
    em.open("", f"entry {i} of a {src.layout} vector, from the thread that holds it")
    guard = layout.owner_guard()
    if guard:
        em.open(f"if ({guard})")
    em.line("#pragma unroll")
    em.line(f"for (int argus_v = 0; argus_v < {src.count}; ++argus_v) "
            f"if ({layout.coord(0, 'argus_v')} == ({i})) "
            f"argus::st_shared_f32({base}, {src.reg('argus_v')});")
    if guard:
        em.close()
    _sync(ctx)
    em.line(f"{name} = (int)argus::ld_shared_f32({base});")
    _sync(ctx)
    em.close()
    ctx.bind(op.result, Scalar(name))


def prefix_sum_fragment(ctx, op):
    """Exclusive prefix sum of a 1-D fragment, in element order (fp32, as the interpreter)."""
    src = _source(ctx, op)
    out = declare(ctx, op.result, op)
    s_layout = register_layout(src.layout, src.shape)
    d_layout = register_layout(out.layout, out.shape)
    n = src.shape[0]
    em = ctx.em
    c = _contiguous_runs(s_layout)
    if c and src.dtype == DType.int32 and out.dtype == DType.int32 and \
            d_layout.same_as(s_layout):
        _block_scan(ctx, op, src, out, c)
        return
    if s_layout.whole_in_every_thread() and d_layout.whole_in_every_thread():      # every thread holds the whole vector in order (rows(blocked))
        em.open("", "exclusive prefix sum in registers, fp32 in element order")
        em.line("float argus_r = 0.0f;")
        em.line(f"{out.reg('0')} = 0.0f;")
        em.line("#pragma unroll")
        em.open(f"for (int argus_v = 1; argus_v < {n}; ++argus_v)")
        em.line(f"argus_r += {src.reg('argus_v - 1')};")
        em.line(f"{out.reg('argus_v')} = {round_to(out.dtype, 'argus_r')};")
        em.close()
        em.close()
        return
    base = _exchange_buffer(ctx, op, n)
    em.open("", "prefix sum through shared memory")
    _write_elements(ctx, src, base)
    _sync(ctx)
    em.line("#pragma unroll")
    em.open(f"for (int argus_v = 0; argus_v < {out.count}; ++argus_v)")
    em.line("float argus_r = 0.0f;")
    em.line(f"for (int argus_i = 0; argus_i < {d_layout.coord(0, 'argus_v')}; ++argus_i) "
            f"argus_r += argus::ld_shared_f32({base} + 4 * argus_i);")
    em.line(f"{out.reg('argus_v')} = {round_to(out.dtype, 'argus_r')};")
    em.close()
    _sync(ctx)
    em.close()


RULES = {"reduce.row": _reduce_row, "frag.convert": _convert}
