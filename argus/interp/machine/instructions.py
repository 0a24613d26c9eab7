"""The instructions agents yield. Each is one interleaving point for the scheduler.

An instruction says whether it can execute now (`ready`; a wait whose phase has not
completed cannot), executes atomically when the scheduler picks it, and describes what
it waits for when the machine deadlocks. Returning STAY keeps the agent on the same
instruction (bar.sync: arrive first, then wait for the generation).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .async_ops import BulkStore, GlobalTensor, TmaLoad, Wgmma
from .barriers import ClusterBarrier, NamedBarrier
from .errors import AsyncOpError, RegisterInFlightError
from .mbarrier import Mbarrier
from .memory import Region
from .registers import RegisterFragment

STAY = object()


@dataclass(frozen=True)
class WaitTarget:
    """What a blocked agent waits for, for deadlock reports."""

    what: str
    barrier: str | None = None
    parity: int | None = None

    def __str__(self) -> str:
        return self.what


class Instruction:
    def ready(self, machine, agent) -> bool:
        return True

    def execute(self, machine, agent):
        raise NotImplementedError

    def waiting_for(self, machine, agent) -> WaitTarget:
        return WaitTarget(f"{type(self).__name__}")


# -- mbarrier -------------------------------------------------------------------------
@dataclass
class MbarrierInit(Instruction):
    bar: Mbarrier
    count: int

    def execute(self, machine, agent):
        self.bar.init(self.count)


@dataclass
class Arrive(Instruction):
    bar: Mbarrier
    count: int = 1
    expect_tx: int = 0

    def execute(self, machine, agent):
        return self.bar.arrive(self.count, self.expect_tx, clock=agent.owner.event().clock)


@dataclass
class ExpectTx(Instruction):
    bar: Mbarrier
    nbytes: int

    def execute(self, machine, agent):
        self.bar.expect_tx(self.nbytes, clock=agent.owner.event().clock)


@dataclass
class WaitParity(Instruction):
    """mbarrier.try_wait.parity in a loop: blocks until the phase with this parity completed."""

    bar: Mbarrier
    parity: int

    def ready(self, machine, agent):
        return self.bar.test_wait_parity(self.parity)

    def execute(self, machine, agent):
        agent.owner.clock.join(self.bar.acquired_clock())

    def waiting_for(self, machine, agent):
        return WaitTarget(f"mbarrier {self.bar.name!r} parity {self.parity} "
                          f"(barrier is {self.bar!r})", self.bar.name, self.parity)


@dataclass
class TryWaitParity(Instruction):
    """One mbarrier.try_wait.parity probe: returns True/False, never blocks."""

    bar: Mbarrier
    parity: int

    def execute(self, machine, agent):
        done = self.bar.test_wait_parity(self.parity)
        if done:
            agent.owner.clock.join(self.bar.acquired_clock())
        return done


# -- TMA and bulk stores -------------------------------------------------------------
@dataclass
class TmaLoadIssue(Instruction):
    """Issues a TMA load as `machine.tma_pieces` bands of rows, each landing on its own."""

    src: GlobalTensor
    coords: tuple
    dst: Region
    bar: Mbarrier

    def execute(self, machine, agent):
        rows = self.dst.shape[0]
        pieces = max(1, min(machine.tma_pieces, rows))
        bounds = [rows * i // pieces for i in range(pieces + 1)]
        for start, stop in zip(bounds, bounds[1:]):
            band = self.dst if pieces == 1 else self.dst.rows(start, stop)
            coords = (self.coords[0] + start, *self.coords[1:])
            owner = machine.async_owner(agent, f"TMA load {self.src.name}{list(coords)} "
                                               f"-> {band.describe()} by {agent.name}")
            machine.launch(TmaLoad(agent.name, owner, self.src, coords, band, self.bar))


@dataclass
class TmaStoreIssue(Instruction):
    src: Region
    dst: GlobalTensor
    coords: tuple

    def execute(self, machine, agent):
        owner = machine.async_owner(agent, f"TMA store {self.src.describe()} -> "
                                           f"{self.dst.name}{list(self.coords)} by {agent.name}")
        op = BulkStore(agent.name, owner, self.src, self.dst, self.coords)
        agent.bulk_groups.add(op)
        machine.launch(op)


@dataclass
class BulkCommit(Instruction):
    def execute(self, machine, agent):
        agent.bulk_groups.commit()


@dataclass
class BulkWait(Instruction):
    """cp.async.bulk.wait_group N: all but the N most recent bulk groups have completed."""

    n: int

    def ready(self, machine, agent):
        return agent.bulk_groups.can_wait(self.n)

    def execute(self, machine, agent):
        for op in agent.bulk_groups.retire(self.n):
            agent.owner.clock.join(op.owner.clock)

    def waiting_for(self, machine, agent):
        return WaitTarget(f"cp.async.bulk.wait_group {self.n}")


# -- wgmma ------------------------------------------------------------------------------
@dataclass
class WgmmaFence(Instruction):
    def execute(self, machine, agent):
        for frag in machine.fragments:
            if frag.owner in (None, agent.name):
                frag.needs_fence = False


@dataclass
class WgmmaIssue(Instruction):
    acc: RegisterFragment
    a: object  # Region (smem) or RegisterFragment
    b: Region
    trans_b: bool = False

    def execute(self, machine, agent):
        regs = [self.acc] + ([self.a] if isinstance(self.a, RegisterFragment) else [])
        for frag in regs:
            if frag.needs_fence:
                raise RegisterInFlightError(
                    f"wgmma uses registers {frag.name!r} written since the last wgmma.fence; "
                    f"execute wgmma.fence (warpgroup_arrive) before the first wgmma")
        owner = machine.async_owner(agent, f"wgmma #{agent.wgmma_count} by {agent.name}")
        agent.wgmma_count += 1
        op = Wgmma(agent.name, owner, self.acc, self.a, self.b, self.trans_b, agent.last_wgmma)
        for frag in regs:
            frag.in_flight += 1
        agent.last_wgmma = op
        agent.wgmma_groups.add(op)
        machine.launch(op)


@dataclass
class WgmmaCommit(Instruction):
    def execute(self, machine, agent):
        agent.wgmma_groups.commit()


@dataclass
class WgmmaWait(Instruction):
    """wgmma.wait_group N: all but the N most recent wgmma groups have completed."""

    n: int

    def ready(self, machine, agent):
        return agent.wgmma_groups.can_wait(self.n)

    def execute(self, machine, agent):
        for op in agent.wgmma_groups.retire(self.n):
            op.retire()
            agent.owner.clock.join(op.owner.clock)

    def waiting_for(self, machine, agent):
        return WaitTarget(f"wgmma.wait_group {self.n}")


# -- generic shared-memory access and fences ----------------------------------------------
@dataclass
class StShared(Instruction):
    dst: Region
    values: np.ndarray

    def execute(self, machine, agent):
        values = np.asarray(self.values)
        if values.shape != self.dst.shape:
            raise AsyncOpError(f"st.shared of shape {values.shape} into {self.dst.describe()} "
                               f"of shape {self.dst.shape}")
        machine.record(self.dst, write=True, proxy="generic", owner=agent.owner,
                       label=f"st.shared")
        self.dst.store_codes(self.dst.dtype.encode(values))


@dataclass
class LdShared(Instruction):
    src: Region

    def execute(self, machine, agent):
        machine.record(self.src, write=False, proxy="generic", owner=agent.owner,
                       label=f"ld.shared")
        return self.src.dtype.decode(self.src.codes().copy())


@dataclass
class FenceProxyAsync(Instruction):
    def execute(self, machine, agent):
        machine.smem.fence_proxy_async(agent.owner.owner_id, agent.owner.event())


# -- named and cluster barriers -----------------------------------------------------------
@dataclass
class BarSync(Instruction):
    barrier: NamedBarrier
    threads: int
    _generation: int | None = field(default=None, repr=False)

    def ready(self, machine, agent):
        return self._generation is None or self.barrier.generation > self._generation

    def execute(self, machine, agent):
        if self._generation is None:
            self._generation = self.barrier.arrive(agent.threads, self.threads,
                                                   agent.owner.event().clock)
            if self.barrier.generation == self._generation:
                return STAY
        self._generation = None  # the same instruction object may be yielded again
        agent.owner.clock.join(self.barrier.released_clock)

    def waiting_for(self, machine, agent):
        b = self.barrier
        return WaitTarget(f"bar.sync {b.barrier_id}, {self.threads} ({b.arrived} threads arrived)",
                          b.name)


@dataclass
class BarArrive(Instruction):
    barrier: NamedBarrier
    threads: int

    def execute(self, machine, agent):
        self.barrier.arrive(agent.threads, self.threads, agent.owner.event().clock)


@dataclass
class ClusterArrive(Instruction):
    barrier: ClusterBarrier

    def execute(self, machine, agent):
        agent.cluster_generation = self.barrier.arrive(agent.owner.event().clock)


@dataclass
class ClusterWait(Instruction):
    barrier: ClusterBarrier

    def ready(self, machine, agent):
        if agent.cluster_generation is None:
            raise AsyncOpError(f"{agent.name}: barrier.cluster.wait without a preceding "
                               f"barrier.cluster.arrive")
        return self.barrier.generation > agent.cluster_generation

    def execute(self, machine, agent):
        agent.cluster_generation = None
        agent.owner.clock.join(self.barrier.released_clock)

    def waiting_for(self, machine, agent):
        return WaitTarget(f"barrier.cluster.wait ({self.barrier.arrived} of "
                          f"{self.barrier.participants} arrived)", self.barrier.name)
