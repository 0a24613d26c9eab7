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
    array, index = op.arg("array", args), op.arg("index", args)
    if not 0 <= index < len(array):
        raise InterpretError(f"{op.loc}: mbarrier index {index} out of range for an array "
                             f"of {len(array)}; compute it modulo the stage count")
    return array[index]


def _init(agent, op, args):
    yield agent.machine.mbarrier_init(op.arg("bar", args), op.attrs["arrivals"])


def _arrive(agent, op, args):
    bar, cta = op.arg("bar", args), op.arg("cta", args)
    if cta is not None:
        bar = agent.block.cluster.peer_barrier(op, bar, cta)
    yield agent.machine.arrive(bar, agent.threads)


def _expect_tx(agent, op, args):
    # every executing thread arrives and adds its bytes (so do it inside elect_one)
    n = agent.threads
    nbytes = int(op.arg("bytes", args))
    yield agent.machine.arrive(op.arg("bar", args), n, expect_tx=n * nbytes)


def _wait(agent, op, args):
    yield agent.machine.wait(op.arg("bar", args), int(op.arg("phase", args)) & 1)


RULES = {"mbarrier.alloc": _alloc, "mbarrier.at": _at, "mbarrier.init": _init,
         "mbarrier.arrive": _arrive, "mbarrier.expect_tx": _expect_tx, "mbarrier.wait": _wait}
