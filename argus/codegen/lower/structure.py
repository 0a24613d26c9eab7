"""Structure: ids, loops, conditionals, roles (warpgroup branches with setmaxnreg),
elect-one, persistent tile schedules (the order of argus.ir.schedule), assumptions."""

from __future__ import annotations

from argus.layout.layout import LayoutError

from ..errors import CodegenError
from ..values import Scalar
from . import filtered_loop, filtered_walk
from .indexed import element_is_snapshot

WARPGROUP = 128


def lower_block(ctx, block) -> None:
    from . import RULES
    saved, frags = ctx.following, list(ctx.fragments)
    for i, op in enumerate(block.ops):
        ctx.em.at(op.loc)
        rule = RULES.get(op.opcode)
        if rule is None:
            raise CodegenError(f"the Hopper backend cannot generate '{op.opcode}' yet",
                               op.loc, "run this kernel with `argus run --interpret`, or "
                               "rewrite it with the ops listed in docs/design/codegen.md")
        ctx.following = block.ops[i + 1:]
        try:
            rule(ctx, op)
        except CodegenError as err:
            if err.loc is None:
                raise CodegenError(err.message, op.loc, err.hint) from None
            raise
        except LayoutError as err:
            raise CodegenError(f"cannot generate '{op.opcode}': {err}", op.loc,
                               "run it with `argus run --interpret`; the Hopper backend "
                               "generates the ops listed in docs/design/codegen.md") from None
    ctx.following, ctx.fragments = saved, frags   # C scope: fragments die with the block


def block_index(ctx, axis: str) -> str:
    """The block's id on `axis` as C: blockIdx, or counted from the last block when the
    kernel launches its blocks in reverse (Launch.block_order)."""
    if ctx.kernel.launch.block_order == "reversed":
        return f"(int)(gridDim.{axis} - 1u - blockIdx.{axis})"
    return f"(int)blockIdx.{axis}"


def _block_id(ctx, op):
    ctx.scalar(op, "int", block_index(ctx, op.attrs.get("axis", "x")), nonneg=True)


def _cluster_rank(ctx, op):
    ctx.scalar(op, "int", "(int)argus::cluster_cta_rank()", nonneg=True)


def _warpgroup_index(ctx, op):
    wgs = ctx.role_warpgroups
    if wgs is None:
        ctx.scalar(op, "int", "argus_warpgroup", nonneg=True)
        return
    if list(wgs) == list(range(wgs[0], wgs[0] + len(wgs))):
        ctx.scalar(op, "int", f"argus_warpgroup - {wgs[0]}", nonneg=True)
    else:
        table = ", ".join(str(wgs.index(w)) if w in wgs else "-1" for w in range(max(wgs) + 1))
        ctx.scalar(op, "int", f"argus::table<{table}>(argus_warpgroup)")


def _for(ctx, op):
    walk = filtered_walk.match(ctx, op)
    if walk is not None:        # a block's share of a filtered walk: strided, not filtered
        filtered_walk.lower(ctx, walk, lower_block)
        return
    scan = filtered_loop.match(ctx, op, element_is_snapshot)
    if scan is not None:        # a scan for the iterations to run: its filter ahead
        filtered_loop.lower(ctx, scan, op, lower_block)
        return
    start, stop, step = (ctx.expr(op.arg(n), op) for n in ("start", "stop", "step"))
    body = op.regions[0]
    var = ctx.em.name(body.args[0].name)
    # counting up from a value >= 0: the counter is >= 0 (C's / and % on it are Python's)
    up = step.isdigit() and int(step) > 0
    ctx.bind(body.args[0], Scalar(var, ctx.lower_bound(op.arg("start"), op) if up else None))
    if all(x.lstrip("-").isdigit() for x in (start, stop, step)) and int(step) > 0 and \
            len(range(int(start), int(stop), int(step))) <= 16:
        # a short loop of constant bounds (an epilogue's column blocks): unrolled, so the
        # register indices it computes are constants
        ctx.em.line("#pragma unroll")
        unrolled = 1
    else:
        unrolled = 0
    ctx.em.open(f"for (int {var} = {start}; {var} < {stop}; {var} += {step})")
    ctx.unrolled += unrolled
    lower_block(ctx, body)
    ctx.unrolled -= unrolled
    ctx.em.close()


def _if(ctx, op):
    ctx.em.open(f"if ({ctx.expr(op.arg('cond'), op)})")
    lower_block(ctx, op.regions[0])
    if len(op.regions) > 1 and op.regions[1].ops:
        ctx.em.close(" else {")
        ctx.em.level += 1
        lower_block(ctx, op.regions[1])
    ctx.em.close()


def _role(ctx, op):
    wgs = tuple(op.attrs["warpgroups"])
    regs = op.attrs.get("regs")
    cond = " || ".join(f"argus_warpgroup == {w}" for w in wgs)
    if list(wgs) == list(range(wgs[0], wgs[0] + len(wgs))) and len(wgs) > 1:
        cond = f"argus_warpgroup >= {wgs[0]} && argus_warpgroup <= {wgs[-1]}"
    ctx.em.open(f"if ({cond})", f"role {op.attrs['name']}")
    if regs:
        default = ctx.default_regs
        kind = "inc" if regs > default else "dec"
        if regs != default:
            ctx.em.line(f"argus::setmaxnreg_{kind}<{regs}>();")
    saved, ctx.role_warpgroups = ctx.role_warpgroups, wgs
    lower_block(ctx, op.regions[0])
    ctx.role_warpgroups = saved
    ctx.em.close()


def _elect_one(ctx, op):
    scope = op.attrs.get("scope", "warpgroup")
    cond = {"block": "threadIdx.x == 0", "warpgroup": "threadIdx.x % 128 == 0",
            "warp": "threadIdx.x % 32 == 0"}.get(scope)
    if cond is None:
        raise CodegenError(f"elect_one over '{scope}' is not supported", op.loc,
                           "use scope block, warpgroup or warp")
    ctx.em.open(f"if ({cond})", f"elect_one({scope})")
    lower_block(ctx, op.regions[0])
    ctx.em.close()


def _schedule(ctx, op):
    order, group = op.attrs["order"], op.attrs.get("group", 1)
    extents = [ctx.expr(x, op) for x in op.args("extents")]
    body = op.regions[0]
    names = [ctx.em.name(a.name) for a in body.args]
    for a, n in zip(body.args, names):
        ctx.bind(a, Scalar(n, 0))
    i, coords = names[0], names[1:]
    ext = [ctx.em.name(f"tiles{d}") for d in range(len(extents))]
    ctx.em.open("")
    for e, x in zip(ext, extents):
        ctx.em.line(f"const int {e} = {x};")
    total = " * ".join(ext)
    t = ctx.em.name("tile")
    ctx.em.line(f"int {i} = 0;")
    for w in body.ops:       # walked(...) of the body: a running sum over the block's tiles
        if w.opcode == "walked":
            ctx.walked[id(w)] = ctx.em.name(f"{w.result.name}_sum")
            ctx.em.line(f"int {ctx.walked[id(w)]} = 0;")
    if op.attrs.get("by") == "cluster" and tuple(ctx.kernel.launch.cluster) != (1, 1, 1):
        first, step = "(int)argus::cluster_linear_id()", "(int)argus::cluster_count()"
    elif len(ctx.kernel.launch.grid) == 1:
        first, step = block_index(ctx, "x"), "(int)gridDim.x"
    else:
        # the blocks of a grid of several dimensions walk in their linear order, x fastest
        # (as the interpreter and the verifier number them: argus.ir.schedule)
        x, y, z = (block_index(ctx, a) for a in "xyz")
        first = f"({x} + (int)gridDim.x * ({y} + (int)gridDim.y * {z}))"
        step = "(int)(gridDim.x * gridDim.y * gridDim.z)"
    ctx.em.open(f"for (int {t} = {first}; {t} < {total}; {t} += {step}, ++{i})")
    _tile_coords(ctx, op, order, group, ext, t, coords)
    lower_block(ctx, body)
    ctx.em.close()
    ctx.em.close()


def _tile_coords(ctx, op, order, group, ext, t, coords):
    em = ctx.em
    if order == "row_major":
        rest = t
        for d in range(len(ext) - 1, -1, -1):
            if d == 0:
                em.line(f"const int {coords[0]} = {rest};")
            else:
                em.line(f"const int {coords[d]} = {rest} % {ext[d]};")
                nxt = em.name(f"rest{d}")
                em.line(f"const int {nxt} = {rest} / {ext[d]};")
                rest = nxt
        return
    if len(ext) != 2:
        raise CodegenError(f"schedule order {order!r} needs a 2-D tile grid", op.loc)
    n0, n1 = ext
    band, within, first, span = (em.name(x) for x in ("band", "within", "first", "span"))
    if order == "grouped":
        em.line(f"const int {band} = {t} / ({group} * {n1}), {within} = {t} % ({group} * {n1});")
        em.line(f"const int {first} = {band} * {group};")
        em.line(f"const int {span} = min({group}, {n0} - {first});")
        em.line(f"const int {coords[0]} = {first} + {within} % {span};")
        em.line(f"const int {coords[1]} = {within} / {span};")
    elif order == "swizzled":
        em.line(f"const int {band} = {t} / ({group} * {n0}), {within} = {t} % ({group} * {n0});")
        em.line(f"const int {first} = {band} * {group};")
        em.line(f"const int {span} = min({group}, {n1} - {first});")
        em.line(f"const int {coords[0]} = ({band} & 1) ? {n0} - 1 - {within} / {span} "
                f": {within} / {span};")
        em.line(f"const int {coords[1]} = {first} + {within} % {span};")
    else:
        raise CodegenError(f"unknown schedule order {order!r}", op.loc)


def _walked(ctx, op):
    """The running sum the schedule declared: its value before this tile's weight."""
    total = ctx.walked.get(id(op))
    if total is None:
        raise CodegenError("walked(...) outside the body of a schedule", op.loc,
                           "call it directly in the body of `for i, ... in schedule(...)`")
    ctx.scalar(op, "int", total, nonneg=ctx.nonneg(op.arg("weight"), op))
    ctx.em.line(f"{total} += {ctx.expr(op.arg('weight'), op)};")


def _assume(ctx, op):
    cond = ctx.expr(op.arg("cond"), op)
    ctx.em.line(f"(void){cond};  // assume: checked by the host at launch")


RULES = {"block_id": _block_id, "cluster_rank": _cluster_rank,
         "warpgroup_index": _warpgroup_index, "for": _for, "if": _if, "role": _role,
         "elect_one": _elect_one, "schedule": _schedule, "walked": _walked,
         "assume": _assume}
