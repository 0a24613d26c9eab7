"""The in-context RL loop: propose (provider) -> check and evaluate -> reward -> feed back.

Step 0 evaluates the start configuration (the library's smallest). Every later step sends
the provider the whole trajectory (config, outcome, reward, feedback with counterexamples
and compile errors), the retrieved knowledge and past lessons; parses its reply; evaluates
the configuration unless it was evaluated already (a repeat costs a step, not an
evaluation); and records the step. The best "ok" configuration is kept. The loop stops
on the first exhausted budget (evaluations, steps, seconds, tokens), when the provider
asks to stop, or when the provider fails (the failure is recorded, not raised). The seconds
budget is kept, not overrun: a step is not started when the median step so far would end
past it.

The coder step: a reply may carry a new DSL kernel instead of knobs. It is written to the
episode's work folder and checked by `argus check` in a child process (coder.py; never
imported here); errors and their counterexamples are the next prompt's feedback; a clean
library specialisation is evaluated at its knob configuration, any other clean kernel by
the evaluator's `evaluate_kernel` when it has one (the GPU), else it is "unmeasured".
"""
from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from argus.agent import coder
from argus.agent.context import PlannerContext
from argus.agent.evaluators.base import EvaluatorUnavailable, Outcome
from argus.agent.gemm_config import SMALLEST, GemmConfig
from argus.agent.knowledge import search
from argus.agent.prompt import build_request
from argus.agent.providers.base import ProviderError
from argus.agent.reply import ReplyError, parse_reply
from argus.agent.task import GemmTask
from argus.agent.trajectory import Step, Trajectory, reward_for

DEFAULT_EVALUATIONS = 24
DEFAULT_SECONDS = 600.0


@dataclass
class Budget:
    evaluations: int = DEFAULT_EVALUATIONS
    seconds: float = DEFAULT_SECONDS
    tokens: int = 400_000
    steps: int = 0                      # 0: twice the evaluations

    def __post_init__(self) -> None:
        if self.evaluations < 1 or self.seconds <= 0 or self.tokens < 0:
            raise ValueError("budget: evaluations >= 1, seconds > 0, tokens >= 0")
        if self.steps <= 0:
            self.steps = 2 * self.evaluations


def default_start(task: GemmTask, space=None) -> GemmConfig:
    """The library's smallest configuration: the space's smallest valid one (accepted by
    argus.ops.matmul and verified) when there is a space, else gemm_config.SMALLEST."""
    return space.smallest_valid(task) if space is not None else SMALLEST


def _typical_step_s(traj: Trajectory) -> float:
    """The median seconds of the evaluated steps so far (0 before any): the planner does
    not start an evaluation that would end past its seconds budget."""
    spent = sorted(s.seconds for s in traj.steps if not s.repeated and s.config is not None)
    return spent[len(spent) // 2] if spent else 0.0


@dataclass
class RunResult:
    trajectory: Trajectory
    stop_reason: str
    evaluations: int
    tokens: dict = field(default_factory=dict)
    seconds: float = 0.0
    prompts: list[str] = field(default_factory=list)


class IcrlPlanner:
    def __init__(self, provider, evaluator, task: GemmTask, *, start: GemmConfig | None = None,
                 budget: Budget | None = None, knowledge_k: int = 8, lessons: list | None = None,
                 on_step: Callable[[Step, Trajectory], None] | None = None,
                 keep_prompts: bool = False, work_dir: str | None = None, space=None):
        self.provider, self.evaluator, self.task = provider, evaluator, task
        # the space proposals must stay in: given, else the evaluator's (the GPU evaluator of
        # the library GEMM has one), else none (the cost model ranks the whole knob table)
        self.space = space if space is not None else getattr(evaluator, "space", None)
        self.start = start or default_start(task, self.space)
        self.budget = budget or Budget()
        self.lessons = lessons or []
        self.on_step = on_step
        self.keep_prompts = keep_prompts
        self.work_dir = work_dir            # where model-written kernels go (made on first use)
        self.knowledge = [t for _, t in search(
            "tile pipeline stages warp specialization cluster raster epilogue split-k",
            op=task.op, shape_classes=task.shape_class(), top_k=knowledge_k)]

    def _record(self, traj: Trajectory, step: Step) -> None:
        traj.steps.append(step)
        if self.on_step:
            self.on_step(step, traj)

    def _evaluate(self, config: GemmConfig) -> Outcome:
        try:
            return self.evaluator.evaluate(config, self.task)
        except EvaluatorUnavailable:
            raise
        except Exception as err:
            return Outcome(status="error", source=getattr(self.evaluator, "name", "?"),
                           feedback=f"the evaluator failed: {type(err).__name__}: {err}"[:1500])

    def _kernel_dir(self) -> str:
        if self.work_dir is None:
            self.work_dir = tempfile.mkdtemp(prefix="argus-kernels-")
        return self.work_dir

    def _coder_step(self, traj: Trajectory, index: int, proposal, used: dict,
                    t0: float) -> tuple[Step, bool]:
        """(the step, whether it cost an evaluation) for a reply carrying a DSL kernel."""
        checked = coder.check_candidate(proposal.kernel_source, self._kernel_dir(), index,
                                        dtype=self.task.dtype)

        def step(config, outcome, reward, library="", repeated=False):
            return Step(index, proposal.technique, config, outcome, reward, proposal.invariants,
                        proposal.rationale, repeated=repeated, tokens=used,
                        seconds=time.monotonic() - t0, kernel=checked.path,
                        kernel_library=library)

        if not checked.clean:
            return step(None, checked.outcome, 0.0), False
        built = f"built ({checked.built}); " if checked.built else ""
        if checked.library is not None:
            name, config = checked.library
            previous = traj.seen(config)
            if previous is not None:
                return step(config, Outcome(previous.outcome.status, previous.outcome.tflops,
                                            previous.outcome.time_ms, previous.outcome.source,
                                            feedback=f"this kernel is {name} at the configuration "
                                                     f"of step {previous.index}; change it"),
                            0.0, name, repeated=True), False
            outcome = self._evaluate(config)
            outcome.feedback = (f"verified clean; {built}{name} specialised to "
                                f"{config.diff(self.start)} (vs start): {outcome.feedback}")
            return step(config, outcome, reward_for(outcome, traj.best_tflops()), name), True
        measure = getattr(self.evaluator, "evaluate_kernel", None)
        if measure is None:
            outcome = coder.unmeasured(checked.path, getattr(self.evaluator, "name", "?"))
            outcome.feedback = built + outcome.feedback
            return step(None, outcome, 0.0), False
        try:
            outcome = measure(checked.path, self.task)
        except Exception as err:
            outcome = Outcome("error", source=getattr(self.evaluator, "name", "?"),
                              feedback=f"the kernel evaluation failed: {type(err).__name__}: "
                                       f"{err}"[:1500])
        return step(None, outcome, reward_for(outcome, traj.best_tflops())), True

    def run(self, trajectory: Trajectory | None = None) -> RunResult:
        traj = trajectory or Trajectory(self.task, self.start)
        began = time.monotonic()
        tokens = {"input": 0, "output": 0}
        prompts: list[str] = []
        evals = sum(1 for s in traj.steps if not s.repeated and s.config is not None)
        if not traj.steps:
            t0 = time.monotonic()
            outcome = self._evaluate(self.start)
            self._record(traj, Step(0, "start", self.start, outcome, reward_for(outcome, None),
                                    seconds=time.monotonic() - t0))
            evals += 1
        stop = "budget: evaluations"
        while True:
            if evals >= self.budget.evaluations:
                stop = "budget: evaluations"
                break
            if len(traj.steps) >= self.budget.steps:
                stop = "budget: steps"
                break
            if time.monotonic() - began + _typical_step_s(traj) > self.budget.seconds:
                stop = "budget: seconds"         # the next evaluation would not end in time
                break
            if tokens["input"] + tokens["output"] >= self.budget.tokens > 0:
                stop = "budget: tokens"
                break
            index = traj.steps[-1].index + 1
            best = traj.best()
            ctx = PlannerContext(traj, self.knowledge, getattr(self.evaluator, "name", "?"),
                                 self.lessons, self.budget.evaluations - evals, self.space)
            request = build_request(ctx)
            if self.keep_prompts:
                prompts.append(request.messages[-1].content)
            t0 = time.monotonic()
            try:
                completion = self.provider.complete(request)
            except ProviderError as err:
                self._record(traj, Step(index, "provider-error", None,
                                        Outcome("error", source="provider", feedback=str(err)),
                                        0.0, reply_error=str(err)))
                stop = f"provider failed: {err}"
                break
            used = {"input": completion.input_tokens, "output": completion.output_tokens}
            tokens["input"] += used["input"]
            tokens["output"] += used["output"]
            base = best.config if best else self.start
            try:
                proposal = parse_reply(completion.text, base)
            except ReplyError as err:
                self._record(traj, Step(index, "unparsable-reply", None,
                                        Outcome("error", source="planner", feedback=""), 0.0,
                                        reply_error=str(err), tokens=used,
                                        seconds=time.monotonic() - t0))
                continue
            if proposal.stop:
                stop = f"planner stopped: {proposal.rationale or 'no reason given'}"
                break
            if proposal.kernel_source is not None:
                step, evaluated = self._coder_step(traj, index, proposal, used, t0)
                evals += int(evaluated)
                self._record(traj, step)
                continue
            previous = traj.seen(proposal.config)
            if previous is not None:
                outcome = Outcome(previous.outcome.status, previous.outcome.tflops,
                                  previous.outcome.time_ms, previous.outcome.source,
                                  previous.outcome.violations,
                                  f"this configuration was already evaluated at step "
                                  f"{previous.index}; propose a different one")
                self._record(traj, Step(index, proposal.technique, proposal.config, outcome, 0.0,
                                        proposal.invariants, proposal.rationale, repeated=True,
                                        tokens=used, seconds=time.monotonic() - t0))
                continue
            outcome = self._evaluate(proposal.config)
            evals += 1
            reward = reward_for(outcome, traj.best_tflops())
            self._record(traj, Step(index, proposal.technique, proposal.config, outcome, reward,
                                    proposal.invariants, proposal.rationale, tokens=used,
                                    seconds=time.monotonic() - t0))
        return RunResult(traj, stop, evals, tokens, time.monotonic() - began, prompts)
