"""mbarrier ops as machine instructions (the PTX state machine lives in the machine).

An arrive outside elect_one is executed by all 128 threads of the warpgroup, so it
counts 128 arrivals, as on the GPU; inside elect_one it counts one. `arrive(bar, cta=r)`
arrives on CTA r's copy of the barrier (mbarrier.arrive.shared::cluster)."""

from __future__ import annotations

from ..errors import InterpretError
from ._rule import pure


@pure
def _alloc(agent, op, args):
    return agent.block.allocs[id(op)]


@pure
def _at(agent, op, args):
    array, index = args
    if not 0 <= index < len(array):
        raise InterpretError(f"{op.loc}: mbarrier index {index} out of range for an array "
                             f"of {len(array)}; compute it modulo the stage count")
    return array[index]


def _init(agent, op, args):
    yield agent.machine.mbarrier_init(args[0], op.attrs["arrivals"])


def _arrive(agent, op, args):
    bar = args[0]
    if len(args) > 1 and args[1] is not None:
        bar = agent.block.cluster.peer_barrier(op, bar, args[1])
    yield agent.machine.arrive(bar, agent.threads)


def _expect_tx(agent, op, args):
    # every executing thread arrives and adds its bytes (so do it inside elect_one)
    n = agent.threads
    yield agent.machine.arrive(args[0], n, expect_tx=n * int(args[1]))


def _wait(agent, op, args):
    yield agent.machine.wait(args[0], int(args[1]) & 1)


RULES = {"mbarrier.alloc": _alloc, "mbarrier.at": _at, "mbarrier.init": _init,
         "mbarrier.arrive": _arrive, "mbarrier.expect_tx": _expect_tx, "mbarrier.wait": _wait}
