"""The seeded scheduler: agents (Python generators) and pending async ops interleaved.

Each step the scheduler collects the candidates (agents whose current instruction is
ready, async ops that may land) and picks one with a seeded RNG. Per run it also draws a
landing bias (how eagerly async ops land relative to agent steps) so that some seeds
land copies and MMAs early and others late. Outcomes are values, not hangs:

- Completed: every agent returned and every async op landed;
- Deadlock: no candidate left; names each blocked agent and what it waits for
  (barrier and parity for mbarrier waits);
- StepBudgetExceeded: livelock (e.g. a try_wait spin that never succeeds);
- Faulted: an agent misused the hardware (MachineError: over-arrival, tx underflow,
  registers touched in flight...); carries the error, which names agent, step and seed.
Hazards found by the memory tracker ride along on every result.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .async_ops import AsyncGroups
from .clocks import ClockOwner
from .errors import MachineError, SchedulerError
from .instructions import STAY, Instruction, WaitTarget
from .memory import Hazard


class Agent:
    """One role (a warpgroup, or any set of threads acting together) as a generator."""

    def __init__(self, name: str, program, owner: ClockOwner, threads: int):
        self.name = name
        self.program = program
        self.owner = owner
        self.threads = threads
        self.current: Instruction | None = None
        self.finished = False
        self.wgmma_groups = AsyncGroups("wgmma")
        self.bulk_groups = AsyncGroups("bulk")
        self.last_wgmma = None
        self.wgmma_count = 0
        self.cluster_generation: int | None = None
        self.steps = 0


@dataclass(frozen=True)
class BlockedAgent:
    agent: str
    waiting_for: WaitTarget

    @property
    def barrier(self) -> str | None:
        return self.waiting_for.barrier

    @property
    def parity(self) -> int | None:
        return self.waiting_for.parity

    def __str__(self) -> str:
        return f"{self.agent} waits on {self.waiting_for}"


@dataclass
class RunResult:
    seed: int
    steps: int
    hazards: list[Hazard] = field(default_factory=list)
    trace: list[str] = field(default_factory=list, repr=False)  # who moved at each step

    @property
    def ok(self) -> bool:
        return isinstance(self, Completed) and not self.hazards


@dataclass
class Completed(RunResult):
    def __str__(self) -> str:
        tail = "".join(f"\n  hazard: {h}" for h in self.hazards)
        return f"completed in {self.steps} steps (seed {self.seed}){tail}"


@dataclass
class Deadlock(RunResult):
    blocked: list[BlockedAgent] = field(default_factory=list)

    def __str__(self) -> str:
        lines = "".join(f"\n  {b}" for b in self.blocked)
        return (f"deadlock after {self.steps} steps (seed {self.seed}): every agent is blocked "
                f"and no async op is pending that could release it:{lines}")


@dataclass
class StepBudgetExceeded(RunResult):
    running: list[BlockedAgent] = field(default_factory=list)

    def __str__(self) -> str:
        lines = "".join(f"\n  {b}" for b in self.running)
        return (f"step budget of {self.steps} exceeded (seed {self.seed}): livelock, or raise "
                f"step_budget for a longer kernel; agents were at:{lines}")


@dataclass
class Faulted(RunResult):
    agent: str = ""
    error: MachineError | None = None

    def __str__(self) -> str:
        return f"fault: {self.error}"


class Scheduler:
    def __init__(self, machine, seed: int, step_budget: int):
        self.machine = machine
        self.seed = seed
        self.step_budget = step_budget
        self.rng = random.Random(seed)
        self.land_bias = self.rng.uniform(0.05, 0.95)
        self._steps = 0
        self.trace: list[str] = []

    def _advance(self, agent: Agent, value=None) -> None:
        self.machine.current_agent = agent
        try:
            started = agent.current is not None
            instr = agent.program.send(value) if started and hasattr(agent.program, "send") \
                else next(agent.program)
        except StopIteration:
            agent.finished, agent.current = True, None
            self._check_retired(agent)
            return
        finally:
            self.machine.current_agent = None
        if not isinstance(instr, Instruction):
            raise SchedulerError(
                f"agent {agent.name!r} yielded {instr!r}; yield machine instructions "
                f"(m.wait(...), m.arrive(...), ...) only")
        agent.current = instr

    def _check_retired(self, agent: Agent) -> None:
        for groups, what in ((agent.wgmma_groups, "wgmma"), (agent.bulk_groups, "TMA store")):
            left = len(groups.open_ops) + sum(len(g) for g in groups.committed)
            if left:
                self.machine.hazards.append(
                    Hazard("unwaited-async", "", agent.name, f"{left} {what}(s)"))

    def _where(self, agent: Agent) -> BlockedAgent:
        return BlockedAgent(agent.name, agent.current.waiting_for(self.machine, agent))

    def run(self):
        try:
            return self._run()
        except MachineError as err:
            return Faulted(self.seed, self._steps, list(self.machine.hazards), self.trace,
                           getattr(err, "_agent", ""), err)

    def _run(self):
        m = self.machine
        for agent in m.agents:
            self._guard(agent.name, 0, self._advance, agent)
        steps = 0
        while True:
            self._steps = steps
            live = [a for a in m.agents if not a.finished]
            if not live and not m.pending:
                return Completed(self.seed, steps, list(m.hazards), self.trace)
            ready_agents = [a for a in live if self._ready(a)]
            landable = [op for op in m.pending if op.can_land()]
            if not ready_agents and not landable:
                return Deadlock(self.seed, steps, list(m.hazards), self.trace,
                                [self._where(a) for a in live])
            if steps >= self.step_budget:
                return StepBudgetExceeded(self.seed, steps, list(m.hazards), self.trace,
                                          [self._where(a) for a in live])
            steps += 1
            if landable and (not ready_agents or self.rng.random() < self.land_bias):
                op = self.rng.choice(landable)
                self.trace.append(f"land {op.describe()}")
                m.pending.remove(op)
                self._guard(op.issuer, steps, op.land, m)
                op.landed = True
            else:
                agent = self.rng.choice(ready_agents)
                self.trace.append(f"{agent.name}: {type(agent.current).__name__}")
                agent.steps += 1
                result = self._guard(agent.name, steps, agent.current.execute, m, agent)
                if result is not STAY:
                    self._guard(agent.name, steps, self._advance, agent, result)

    def _ready(self, agent: Agent) -> bool:
        return self._guard(agent.name, None, agent.current.ready, self.machine, agent)

    def _guard(self, who: str, step, fn, *args):
        """Run fn; re-raise machine errors with the agent and step that caused them."""
        try:
            return fn(*args)
        except MachineError as err:
            if getattr(err, "_located", False):
                raise
            at = f" at step {step}" if step is not None else ""
            located = type(err)(f"{who}{at} (seed {self.seed}): {err}")
            located._located = True
            located._agent = who
            raise located from err
