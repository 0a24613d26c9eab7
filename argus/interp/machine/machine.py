"""The Machine: one CTA's (or cluster's) state and the instruction set agents yield.

Usage (what the IR evaluator will do, one instruction per yield):

    m = Machine(seed=3)
    full = m.mbarrier("full", count=1)
    a = m.smem.alloc("a", "bf16", (64, 16), stages=2)
    def producer():
        yield m.arrive(full, expect_tx=a.stage_bytes)
        yield m.tma_load(A, (0, 0), a.stage(0), full)
    m.spawn("producer", producer())
    result = m.run()   # Completed | Deadlock | StepBudgetExceeded | Faulted

Setup calls (mbarrier, alloc, fragment, spawn) happen outside agents; everything an
agent does to shared state goes through a yielded instruction.
"""

from __future__ import annotations

import itertools

from argus.limits import SMEM_PER_SM

from . import instructions as ins
from .barriers import ClusterBarrier, NamedBarrier
from .clocks import ClockOwner
from .errors import SchedulerError
from .mbarrier import Mbarrier
from .memory import SharedMemory
from .registers import RegisterFragment
from .scheduler import Agent, Scheduler


class Machine:
    def __init__(self, seed: int = 0, detect_races: bool = True, step_budget: int = 200_000,
                 smem_bytes: int = SMEM_PER_SM, strict_tx: bool = True, tma_pieces: int = 2,
                 exact: bool = False):
        self.seed = seed
        self.exact = exact  # shared memory as bytes through the swizzles (exact mode)
        self.tma_pieces = tma_pieces  # a TMA load lands in this many bands of rows
        self.detect_races = detect_races
        self.step_budget = step_budget
        self.strict_tx = strict_tx
        self.smem = SharedMemory(smem_bytes, exact=exact)
        self.agents: list[Agent] = []
        self.pending: list = []
        self.hazards: list = []
        self.fragments: list[RegisterFragment] = []
        self.barriers: dict[str, Mbarrier] = {}
        self.named: dict[tuple[str, int], NamedBarrier] = {}   # (CTA prefix, id)
        self.current_agent: Agent | None = None
        # per (agent, thread): its newest cp.async copies, which a later
        # cp.async.mbarrier.arrive of that thread also waits for
        self.cp_async_last: dict = {}
        self._ids = itertools.count()
        self._ran = False

    # -- setup ------------------------------------------------------------------------
    def mbarrier(self, name: str, count: int | None = None) -> Mbarrier:
        """A new mbarrier; with `count` it is initialised now (before the roles start)."""
        if name in self.barriers:
            raise SchedulerError(f"mbarrier {name!r} created twice; names must be unique")
        bar = Mbarrier(name, strict_tx=self.strict_tx)
        if count is not None:
            bar.init(count)
        self.barriers[name] = bar
        return bar

    def mbarriers(self, name: str, n: int, count: int | None = None) -> list[Mbarrier]:
        return [self.mbarrier(f"{name}[{i}]", count) for i in range(n)]

    def fragment(self, name: str, shape, owner: str | None = None) -> RegisterFragment:
        """A zeroed fp32 register fragment; it needs a wgmma.fence before a wgmma uses it."""
        frag = RegisterFragment.zeros(name, shape)
        frag.owner = owner
        self.fragments.append(frag)
        return frag

    def cluster_barrier(self, participants: int) -> ClusterBarrier:
        return ClusterBarrier(participants)

    def spawn(self, name: str, program, threads: int = 128) -> Agent:
        if any(a.name == name for a in self.agents):
            raise SchedulerError(f"agent {name!r} spawned twice; names must be unique")
        if not hasattr(program, "__next__"):
            raise SchedulerError(
                f"agent {name!r}: spawn takes a generator (call the role function: "
                f"spawn({name!r}, role()) ), got {type(program).__name__}")
        agent = Agent(name, program, ClockOwner(next(self._ids), name), threads)
        self.agents.append(agent)
        return agent

    def run(self):
        if self._ran:
            raise SchedulerError("a Machine runs once; build a fresh one for another seed")
        self._ran = True
        return Scheduler(self, self.seed, self.step_budget).run()

    # -- used by instructions and async ops ------------------------------------------------
    def async_owner(self, agent: Agent, name: str) -> ClockOwner:
        agent.owner.event()
        return ClockOwner(next(self._ids), name, start=agent.owner.clock)

    def launch(self, op) -> None:
        self.pending.append(op)

    def record(self, region, write: bool, proxy: str, owner: ClockOwner, label: str) -> None:
        event = owner.event()
        self.hazards.extend(self.smem.access(region, write, proxy, event, label,
                                             detect_races=self.detect_races))

    def record_spans(self, spans, where: str, write: bool, proxy: str, owner: ClockOwner,
                     label: str) -> None:
        """One access of several byte ranges of shared memory (a thread's cp.async chunks)."""
        event = owner.event()
        self.hazards.extend(self.smem.access_spans(spans, where, write, proxy, event, label,
                                                   detect_races=self.detect_races))

    # -- the instruction set (each returns an instruction to yield) ---------------------------
    def mbarrier_init(self, bar, count):
        return ins.MbarrierInit(bar, count)

    def arrive(self, bar, count: int = 1, expect_tx: int = 0):
        return ins.Arrive(bar, count, expect_tx)

    def expect_tx(self, bar, nbytes: int):
        return ins.ExpectTx(bar, nbytes)

    def wait(self, bar, parity: int):
        return ins.WaitParity(bar, parity)

    def try_wait(self, bar, parity: int):
        return ins.TryWaitParity(bar, parity)

    def tma_load(self, src, coords, dst, bar):
        return ins.TmaLoadIssue(src, tuple(coords), dst, bar)

    def tma_store(self, src, dst, coords):
        return ins.TmaStoreIssue(src, dst, tuple(coords))

    def bulk_commit(self):
        return ins.BulkCommit()

    def bulk_wait(self, n: int):
        return ins.BulkWait(n)

    def wgmma_fence(self):
        return ins.WgmmaFence()

    def wgmma(self, acc, a, b, trans_b: bool = False):
        return ins.WgmmaIssue(acc, a, b, trans_b)

    def wgmma_commit(self):
        return ins.WgmmaCommit()

    def wgmma_wait(self, n: int):
        return ins.WgmmaWait(n)

    def st_shared(self, dst, values):
        return ins.StShared(dst, values)

    def ld_shared(self, src):
        return ins.LdShared(src)

    def fence_proxy_async(self):
        return ins.FenceProxyAsync()

    def _named(self, barrier_id: int, cta: str) -> NamedBarrier:
        key = (cta, barrier_id)
        if key not in self.named:
            self.named[key] = NamedBarrier(barrier_id, cta)
        return self.named[key]

    def bar_sync(self, barrier_id: int, threads: int, cta: str = ""):
        """bar.sync on this CTA's barrier `barrier_id` (the CTAs of a cluster share one
        machine, but named barriers, like __syncthreads, never span CTAs)."""
        return ins.BarSync(self._named(barrier_id, cta), threads)

    def bar_arrive(self, barrier_id: int, threads: int, cta: str = ""):
        return ins.BarArrive(self._named(barrier_id, cta), threads)

    def cluster_arrive(self, barrier):
        return ins.ClusterArrive(barrier)

    def cluster_wait(self, barrier):
        return ins.ClusterWait(barrier)
