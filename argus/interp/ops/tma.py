"""TMA box copies between global tensors and shared memory, and their bulk groups.

A multicast load (`multicast=mask`) is one instruction that delivers the box to the same
tile of every CTA in the mask, each copy landing on its own and completing its bytes on
that CTA's copy of the barrier. Inside elect_one each elected thread issues the load (one,
or one per warp with scope="warp"), so its bytes complete that many times, as on the GPU."""

from __future__ import annotations

from dataclasses import dataclass

from ..machine.instructions import Instruction, TmaLoadIssue


@dataclass
class TmaMulticastIssue(Instruction):
    loads: list

    def execute(self, machine, agent):
        for load in self.loads:
            load.execute(machine, agent)


def _load(agent, op, args):
    # every elected thread issues its own copy (four with elect_one(scope="warp"), as the
    # generated code does); outside elect_one the agent issues one
    for _ in range(agent.elected or 1):
        yield from _issue_load(agent, op, args)


def _issue_load(agent, op, args):
    dst, src, bar, mask = (op.arg(n, args) for n in ("dst", "src", "bar", "multicast"))
    if mask is not None:
        cluster = agent.block.cluster
        yield TmaMulticastIssue([
            TmaLoadIssue(src.tensor, tuple(src.origin), cluster.peer_region(op, dst, r),
                         cluster.peer_barrier(op, bar, r))
            for r in cluster.ranks_of(op, mask)])
        return
    yield agent.machine.tma_load(src.tensor, src.origin, dst, bar)


def _store(agent, op, args):
    dst, src = op.arg("dst", args), op.arg("src", args)
    yield agent.machine.tma_store(src, dst.tensor, dst.origin)


def _commit(agent, op, args):
    yield agent.machine.bulk_commit()


def _wait(agent, op, args):
    yield agent.machine.bulk_wait(int(op.attrs.get("pending", 0)))


RULES = {"tma.load": _load, "tma.store": _store, "tma.store_commit": _commit,
         "tma.store_wait": _wait}
