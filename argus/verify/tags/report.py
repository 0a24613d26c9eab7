"""Turning a z3 model into a minimised Counterexample: which variables to minimise first
(block, step, tile, loop counters, warpgroup, thread, register, then sizes), where the
thread sits in the block, and a tile order that the schedule really visits."""

from __future__ import annotations

import z3

from argus.ir.schedule import tile_coords
from argus.layout.hopper import get_atom
from argus.layout.hopper.tv import TVLayoutError
from argus.verify.finding import Counterexample, ElementTag
from argus.verify.smt import bv, exact_check, first_model, narrow, value

from . import cluster

KIND_ORDER = ("block", "iteration", "tile", "warpgroup", "thread", "register", "position",
              "size")


def tv_atom(layout: str):
    try:
        return get_atom(layout)
    except TVLayoutError:
        return None


def thread_vars(w, layout: str):
    """(substitution pr, pc -> position of (t, v), t, v, bounds) for a TV atom, else None."""
    tv = tv_atom(layout)
    if tv is None:
        return None
    if "t" not in w.ctx.vars:
        w.ctx.var("t", "thread")
        w.ctx.var("v", "register")
    t, v = w.ctx.vars["t"].term, w.ctx.vars["v"].term
    row, col = tv.coord(narrow(t, 16), narrow(v, 16))
    pairs = [(w.pos["pr"], bv(row)), (w.pos["pc"], bv(col))]
    bounds = [z3.ULT(t, tv.threads), z3.ULT(v, tv.values)]
    return pairs, t, v, bounds


def order_of(w, scope, extra=()) -> list:
    """The terms to minimise, most important first."""
    names = list(scope) + [n for n, v in w.ctx.vars.items()
                           if v.kind in ("thread", "register", "position", "size")]
    seen, terms = set(), []
    for kind in KIND_ORDER:
        walkers = [n for n in ("block", "cluster", "rank") if n in w.ctx.vars]
        for n in (walkers if kind == "block" else []) + names:
            var = w.ctx.vars.get(n)
            if var and var.kind == kind and n not in seen:
                seen.add(n)
                terms.append(var.term)
    return [*extra, *terms]


class Undecided(Exception):
    """z3 found neither a proof nor a counterexample (a timeout)."""


def find(w, goal, scope, extra=(), minimise_first=()):
    """A minimised model of `goal` under the facts, path and `extra`, or None when the
    goal is impossible once products of two symbols mean their product. With free tile
    coordinates a model may name a tile that its block does not visit at that step; the
    model is then re-solved with a (block, step, tile) triple the schedule really visits:
    first the block and step that visit the model's tile, else the tile that the model's
    block visits at its step. If neither keeps the violation, the model stays as it is."""
    extra = [*w.path, *extra]
    minimise = w.minimising()
    order = order_of(w, scope, minimise_first) if minimise else []
    model = None
    if w.ctx.abstraction is not None:          # routing sums: integers find it faster
        from .abstraction import IMPOSSIBLE, integer_model
        model = integer_model(w.ctx, goal, order, extra, minimise=minimise)
        if model is IMPOSSIBLE:
            return None
    if model is None:
        model = first_model(w.ctx, goal, order, extra, exact_only=True)
    if model is None:
        # the violation exists only for product atoms no real product takes (proved
        # away: None, the check holds), or the solver gave up
        if exact_check(w.ctx, goal, extra) == z3.unsat:
            return None
        raise Undecided("solver timeout")
    for pinned in (_visiting_block(w, model, scope), _visited_tile(w, model, scope)):
        if pinned:
            better = first_model(w.ctx, goal, order, extra + pinned, exact_only=True)
            if better is not None:
                return better
    return model


TILE_SEARCH_LIMIT = 1 << 16


def _schedule_values(w, model, i, info):
    extents = tuple(value(model, e) for e in info.extents)
    total = 1
    for e in extents:
        total *= e
    return extents, total, value(model, info.blocks)


def _pin(w, model, i, info, block, step, coords) -> list:
    out = [w.ctx.vars[info.walker].term == block, w.ctx.vars[i].term == step]
    out += [size == value(model, size) for size in w.sizes.values()]
    out += [w.ctx.vars[c].term == x for c, x in zip(info.coords, coords)]
    return out


def _visiting_block(w, model, scope) -> list:
    out = []
    for i, info in w.schedules.items():
        if i not in scope or info.walker not in w.ctx.vars:
            continue
        extents, total, blocks = _schedule_values(w, model, i, info)
        want = tuple(value(model, w.ctx.vars[c].term) for c in info.coords)
        if not 0 < total <= TILE_SEARCH_LIMIT or not blocks:
            continue
        for t in range(total):
            if tuple(tile_coords(info.order, info.group, extents, t)) == want:
                out += _pin(w, model, i, info, t % blocks, t // blocks, want)
                break
    return out


def _visited_tile(w, model, scope) -> list:
    out = []
    for i, info in w.schedules.items():
        if i not in scope or info.walker not in w.ctx.vars:
            continue
        extents, total, blocks = _schedule_values(w, model, i, info)
        block = value(model, w.ctx.vars[info.walker].term)
        step = value(model, w.ctx.vars[i].term)
        t = block + step * blocks
        if not 0 <= t < total:
            continue
        out += _pin(w, model, i, info, block, step, tile_coords(info.order, info.group,
                                                                 extents, t))
    return out


def warpgroup_of(w, model):
    """The absolute warpgroup of the walk at `model` (None outside a role): the model's
    value of the role's index when one walk stands for every warpgroup (symmetric.py)."""
    if w.role is None:
        return None
    wg = w.role.warpgroup
    return value(model, wg) if z3.is_expr(wg) else wg


def counterexample(w, model, scope, *, layout=None, warpgroup=None, thread_base=0,
                   elements=(), smem_byte=None, barrier=None, extra_iter=None):
    iteration = {w.ctx.vars[n].name: value(model, w.ctx.vars[n].term) for n in scope
                 if w.ctx.vars[n].kind != "warpgroup"}
    if z3.is_expr(warpgroup):              # the role walked once for all its warpgroups
        warpgroup = value(model, warpgroup)
    if z3.is_expr(thread_base):
        thread_base = value(model, thread_base)
    iteration.update(cluster.describe(w, model, value))        # cluster and rank
    block = None
    walkers = {w.schedules[n].walker for n in scope if n in w.schedules}
    if "cluster" in walkers:
        block = cluster.block_of(w, model, value)               # a cluster's block
    elif "block" in w.ctx.vars and walkers:
        block = (value(model, w.ctx.vars["block"].term),)      # a persistent block
    ids = [n for n in w.ctx.vars if n.startswith("block_")]
    if block is None and ids:                                    # block_id("x"), ...
        block = tuple(value(model, w.ctx.vars[n].term) for n in ids)
    if extra_iter:
        iteration.update(extra_iter)
    sizes = {n: value(model, t) for n, t in w.sizes.items()}
    thread = register = warp = lane = cell = None
    tv = tv_atom(layout) if layout is not None else None
    if tv is not None and "t" in w.ctx.vars:
        t = value(model, w.ctx.vars["t"].term)
        register = value(model, w.ctx.vars["v"].term)
        thread = thread_base + t
        warp, lane = thread // 32, thread % 32
        cell = tuple(int(x) for x in tv.coord(t, register))
    from .routing import routing_values
    return Counterexample(block=block, warpgroup=warpgroup, warp=warp, lane=lane,
                          thread=thread, register=register, smem_byte=smem_byte,
                          iteration=iteration, sizes=sizes, elements=tuple(elements),
                          barrier=barrier, layout=layout if cell else None, cell=cell,
                          routing=routing_values(w, model))


def element(model, tensor, index_terms, actual, expected) -> ElementTag:
    return ElementTag(tensor, tuple(value(model, x) for x in index_terms),
                      {k: value(model, x) for k, x in actual.items()},
                      {k: value(model, x) for k, x in expected.items()})


def where(cex) -> str:
    """A short phrase naming the counterexample's block, thread and step."""
    parts = []
    if cex.block is not None:
        parts.append("block " + ",".join(map(str, cex.block)))
    if cex.thread is not None:
        parts.append(f"thread {cex.thread} (warpgroup {cex.warpgroup}, warp {cex.warp}, "
                     f"lane {cex.lane}) register {cex.register}")
    elif cex.warpgroup is not None:
        parts.append(f"warpgroup {cex.warpgroup}")
    if cex.iteration:
        parts.append(", ".join(f"{k}={v}" for k, v in cex.iteration.items()))
    if cex.sizes:
        parts.append(", ".join(f"{k}={v}" for k, v in cex.sizes.items()))
    return "; ".join(parts)
