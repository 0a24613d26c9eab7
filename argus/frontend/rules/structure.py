"""Rules for ids, preconditions and static size helpers."""

from __future__ import annotations

from argus.ir.types import INDEX, PRED, SmemTileType
from argus.ir.nodes import Value

from .base import Args, describe, rule


@rule("block_id")
def block_id(fx, a: Args):
    axis = a.static_str("axis", ("x", "y", "z"))
    return fx.emit("block_id", (), a.call, INDEX, {"axis": axis})


@rule("cluster_rank")
def cluster_rank(fx, a: Args):
    return fx.emit("cluster_rank", (), a.call, INDEX)


@rule("warpgroup_index")
def warpgroup_index(fx, a: Args):
    if not fx.in_role:
        raise fx.error(a.call, "warpgroup_index() is only meaningful inside a role",
                       "wrap the code in `with role(name, warpgroups=(...), regs=...):`")
    return fx.emit("warpgroup_index", (), a.call, INDEX)


@rule("assume")
def assume(fx, a: Args):
    cond = a.get("cond")
    if cond is True:
        return None
    if cond is False:
        a.fail("cond", "this assumption is false for every launch",
               "check the constants it uses")
    if not (isinstance(cond, Value) and cond.type == PRED):
        a.fail("cond", f"assume needs a comparison, got {describe(cond)}", "e.g. assume(K % BK == 0)")
    return fx.emit("assume", (cond,), a.call)


@rule("walked")
def walked(fx, a: Args):
    weight = a.scalar("weight")
    usage = ("for i, tm, tn in schedule(...):\n    nj = ...\n    g0 = walked(nj)\n"
             "    for j in range(nj): ... g0 + j ...")
    if not fx.schedule_bodies:
        raise fx.error(a.call, "walked(...) sums a weight over the tiles of a schedule, and "
                       "this is not inside one", f"call it in the body of a schedule loop:\n{usage}")
    body, step = fx.schedule_bodies[-1]
    if fx.b.current is not body:
        raise fx.error(a.call, "walked(...) must run once per tile: here it is inside a loop "
                       "or a branch of the schedule's body", "call it directly in the "
                       f"schedule's body (a helper it calls is fine):\n{usage}")
    return fx.emit("walked", (weight, step), a.call, INDEX)


@rule("cdiv")
def cdiv(fx, a: Args):
    x, y = a.scalar("a"), a.scalar("b")
    return fx.binop("floordiv", fx.binop("sub", fx.binop("add", x, y, a.call), 1, a.call), y,
                    a.call)


@rule("nbytes")
def nbytes(fx, a: Args):
    x = a.value("x", SmemTileType, what="a shared-memory tile (e.g. a_s[s])")
    return x.type.nbytes


def _context_only(name: str, usage: str):
    @rule(name)
    def only(fx, a: Args):
        raise fx.error(a.call, f"{name}(...) can only be used as {usage}", f"write `{usage}`")
    return only


_context_only("role", 'with role("producer", warpgroups=(0,), regs=40):')
_context_only("elect_one", "with elect_one():")
_context_only("schedule", "for i, tm, tn in schedule(M // BM, N // BN, order=...):")
_context_only("pipeline", "for k, s, phase in pipeline(KT, stages=S, start=i * KT):")
_context_only("tag", "tag(x).field inside tag_assert(...)")
_context_only("coord", "coord(x)[axis] inside tag_assert(...)")
