"""Ids, loops, conditionals, roles, elect-one and persistent schedules.

A role region runs only on the agents (warpgroups) it names; elect-one with block scope
runs on the block's first warpgroup, narrower scopes on the agent itself. Inside it the
agent stands for the threads elected: one (scope "block" or "warpgroup") or one per warp,
four (scope "warp", as the generated `threadIdx.x % 32 == 0`), so each arrival counts that
many threads.
"""

from __future__ import annotations

from argus.ir.schedule import block_tiles
from argus.limits import WARP_SIZE, WARPGROUP_THREADS

from ..cluster import cluster_index

from ..errors import InterpretError
from ._rule import pure


@pure
def _block_id(agent, op, args):
    return agent.block.block_id(op.attrs["axis"])


@pure
def _cluster_rank(agent, op, args):
    return agent.block.rank


@pure
def _warpgroup_index(agent, op, args):
    if agent.role_index is None:
        raise InterpretError(f"{op.loc}: warpgroup_index outside a role; use it inside "
                             f"`with role(...)`")
    return agent.role_index


def _for(agent, op, args):
    start, stop, step = (op.arg(n, args) for n in ("start", "stop", "step"))
    for i in range(start, stop, step):
        yield from agent.run_block(op.regions[0], (i,))


def _if(agent, op, args):
    regions = op.regions
    if op.arg("cond", args):
        yield from agent.run_block(regions[0])
    elif len(regions) > 1:
        yield from agent.run_block(regions[1])


def _role(agent, op, args):
    warpgroups = tuple(op.attrs["warpgroups"])
    if agent.warpgroup not in warpgroups:
        return
    outer = agent.role_index
    agent.role_index = warpgroups.index(agent.warpgroup)
    try:
        yield from agent.run_block(op.regions[0])
    finally:
        agent.role_index = outer


ELECTED = {"block": 1, "warpgroup": 1, "warp": WARPGROUP_THREADS // WARP_SIZE}


def _elect_one(agent, op, args):
    scope = op.attrs.get("scope", "warpgroup")
    if scope == "block" and agent.warpgroup != 0:
        return
    if scope not in ELECTED:
        raise InterpretError(f"{op.loc}: elect_one over {scope!r} is not supported; use "
                             "scope block, warpgroup or warp")
    outer = agent.elected       # nested elections keep the narrower one
    agent.elected = ELECTED[scope] if outer is None else min(outer, ELECTED[scope])
    try:
        yield from agent.run_block(op.regions[0])
    finally:
        agent.elected = outer


def _schedule(agent, op, args):
    extents = tuple(int(a) for a in op.args("extents", args))
    walker, walkers = agent.block.block_index, agent.block.num_blocks
    if op.attrs.get("by") == "cluster":    # every block of a cluster visits the same steps
        walker, walkers = cluster_index(walker, agent.block.grid,
                                        agent.block.kernel.launch.cluster)
    for tile in block_tiles(op.attrs["order"], op.attrs.get("group", 1), extents,
                            walker, walkers):
        yield from agent.run_block(op.regions[0], tile)


@pure
def _walked(agent, op, args):
    """The weights of this agent's earlier steps of the enclosing schedule, summed: the
    running sum restarts where the schedule's step counter is 0."""
    weight, step = int(op.arg("weight", args)), int(op.arg("iteration", args))
    before = 0 if step == 0 else agent.walked.get(id(op), 0)
    agent.walked[id(op)] = before + weight
    return before


@pure
def _assume(agent, op, args):
    if not op.arg("cond", args):
        raise InterpretError(f"{op.loc}: assumption does not hold for these inputs "
                             f"(symbols {agent.block.symbols}); pass shapes that satisfy it")


RULES = {"block_id": _block_id, "cluster_rank": _cluster_rank, "warpgroup_index": _warpgroup_index, "for": _for, "if": _if,
         "role": _role, "elect_one": _elect_one, "schedule": _schedule, "walked": _walked,
         "assume": _assume}
