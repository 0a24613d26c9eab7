"""The whole-kernel coder loop for kernel tasks (tasks/kernel_task.py): propose -> check ->
run against the reference -> estimate or measure -> keep the best -> feed back.

Step 0 judges the start kernel. Each later step sends one request (the prompt shows the
current best kernel in full and the last step's failures in full) and takes `samples`
replies to it (best-of-N, at `temperature`); each reply is a complete file or edit blocks
against the current best, with its stated invariants inserted as tag_asserts; each
candidate is written to <work_dir>/step-NNN/kernel.py, checked by `argus check` in a child
(its counterexamples are the feedback), and, when clean, run by the task on every input
set. The fastest correct candidate of a step that beats the current best becomes the
current best: the next prompt shows it and edit blocks apply to it. The knowledge is
retrieved again every step, with the profile signals of the latest evaluated candidate
(the cost model's on a CPU) in the query.

Stops on the first exhausted budget (evaluations, steps, seconds, tokens), when the model
replies {"stop": true}, or when the provider fails (recorded, not raised: the episode is
paused, and `run(resume=steps)` continues it from the steps made before the failure).
"""
from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from argus.agent.coding import judge_jobs
from argus.agent.coding.budget import kernel_chars, reply_tokens
from argus.agent.coding.coder_reply import parse_coder_reply
from argus.agent.coding.kernel_prompt import build_request
from argus.agent.evaluators.base import Outcome
from argus.agent.knowledge import search
from argus.agent.planner import Budget
from argus.agent.providers.base import ProviderError
from argus.agent.reply import ReplyError
from argus.agent.trajectory import Step

PROVIDER_FAILED = "provider failed"
NOT_EVALUATED = ("unparsable-reply", "provider-error")
EVALUATOR_NOTE = ("the CPU interpreter for correctness, the cost model for time (an "
                  "ESTIMATE for an H200, not a measurement)")
GPU_EVALUATOR_NOTE = ("the GPU for correctness and time (MEASURED: device events, L2 flushed "
                      "before each launch), Nsight Compute's metrics for the profile signals "
                      "where ncu is found")


def evaluator_note(task) -> str:
    return GPU_EVALUATOR_NOTE if getattr(task, "device", "cpu") == "cuda" else EVALUATOR_NOTE


def signals_of(outcome) -> list[str]:
    """The profile signals of an evaluated candidate: the GPU's profile (ncu) or the cost
    model's estimate (older steps kept them only in the estimate)."""
    if "signals" in outcome.details:
        return list(outcome.details["signals"])
    return list((outcome.details.get("estimate") or {}).get("signals", []))


@dataclass
class KernelRun:
    task: object
    steps: list[Step]
    best: Step | None
    best_source: str
    stop_reason: str
    evaluations: int
    tokens: dict
    seconds: float
    prompts: list[str] = field(default_factory=list)
    rounds: list[list[int]] = field(default_factory=list)   # step indices of each request

    @property
    def paused(self) -> bool:
        """A provider failure ended it: the episode can be resumed, it is not done."""
        return self.stop_reason.startswith(PROVIDER_FAILED)

    def to_json(self) -> dict:
        return {"task": self.task.describe(), "stop_reason": self.stop_reason,
                "paused": self.paused, "evaluations": self.evaluations,
                "tokens": self.tokens, "seconds": self.seconds,
                "best": self.best.to_json() if self.best else None,
                "rounds": self.rounds, "steps": [s.to_json() for s in self.steps]}


@dataclass
class CoderState:
    """What one prompt is rendered from (kernel_prompt.user_prompt)."""
    task: object
    steps: list[Step]
    best: Step | None
    base_source: str
    last_round: list[Step]
    knowledge: list
    signals: list[str]
    evaluations_left: int
    samples: int
    evaluator_note: str = EVALUATOR_NOTE


class KernelPlanner:
    def __init__(self, provider, task, *, budget: Budget | None = None, samples: int = 1,
                 temperature: float = 0.0, max_tokens: int | None = None,
                 work_dir: str | None = None, on_step: Callable | None = None,
                 keep_prompts: bool = False, knowledge_k: int = 5, checker=None,
                 compiler=None, backend=None):
        if samples < 1:
            raise ValueError("samples: at least 1 per step")
        self.provider, self.task = provider, task
        self.budget = budget or Budget()
        self.samples, self.temperature, self.max_tokens = samples, temperature, max_tokens
        self.work_dir = work_dir or tempfile.mkdtemp(prefix="argus-kernels-")
        self.on_step, self.keep_prompts, self.knowledge_k = on_step, keep_prompts, knowledge_k
        self.checker, self.compiler = checker, compiler
        self.backend = backend          # parallel/: judges a round's samples side by side
        # the longest kernel a reply may yield: sized to the task's start kernel, so it and
        # a whole rewrite of it are never cut (coding/budget.py)
        self.kernel_chars = kernel_chars(task.start_source)

    def knowledge(self, signals: list[str]) -> list:
        op = self.task.op if self.task.op in ("attention", "moe", "gemm") else None
        query = f"{self.task.op} {' '.join(signals)} " + " ".join(s.replace("-", " ")
                                                                 for s in signals)
        return [t for _, t in search(query, op=op, shape_classes=self.task.shape_class(),
                                     signals=signals, top_k=self.knowledge_k)]

    def judge(self, source: str, index: int) -> tuple[str, Outcome]:
        """(kernel path, outcome) of one candidate: the task's static precheck (a
        KernelBench ModelNew's glue), argus check, then the task's run."""
        path, rejected, built = judge_jobs.check(self.task, source, self.work_dir, index,
                                                 self.checker, self.compiler)
        if rejected is not None:
            return path, rejected
        return path, judge_jobs.evaluate(self.task, path, built)

    def judge_all(self, sources: list[tuple[int, str]]) -> list[tuple[str, Outcome]]:
        """judge() of each (index, source) of a round: side by side on the backend when
        there is one and more than one candidate (injected checkers stay in this process),
        else one by one."""
        if self.backend is None or len(sources) < 2 or self.checker or self.compiler:
            return [self.judge(source, index) for index, source in sources]
        return judge_jobs.judge_on(self.backend, self.task, sources, self.work_dir)

    def _record(self, steps: list[Step], step: Step) -> None:
        steps.append(step)
        if self.on_step:
            self.on_step(step, steps)

    def _resumed(self, steps: list[Step], rounds: list[list[int]]) -> tuple:
        """(best, best source, evaluations, last round, signals, tokens) of the steps made
        before a pause, as the loop had them when the provider failed."""
        best = None
        for step in steps:            # the loop's rule: the fastest, the earliest on a tie
            if not step.outcome.ok:
                continue
            if step.index == 0 and step.technique == "start":
                best = step
            elif step.outcome.time_ms and (best is None or not best.outcome.time_ms or
                                           step.outcome.time_ms < best.outcome.time_ms):
                best = step
        source = (Path(best.kernel).read_text(encoding="utf-8") if best is not None
                  else self.task.start_source)
        evals = sum(1 for s in steps if s.technique not in NOT_EVALUATED)
        last = set(rounds[-1]) if rounds else {steps[-1].index}
        last_round = [s for s in steps if s.index in last]
        ok = [s for s in steps if s.outcome.ok]
        signals = signals_of(ok[-1].outcome) if ok else []
        tokens = {k: sum(s.tokens.get(k, 0) for s in steps) for k in ("input", "output")}
        return best, source, evals, last_round, signals, tokens

    def run(self, resume: list[Step] | None = None,
            rounds: list[list[int]] | None = None) -> KernelRun:
        """The episode; `resume` (with the `rounds` of its requests) continues a paused one
        from its steps, the failed request's provider-error step dropped."""
        began = time.monotonic()
        steps: list[Step] = []
        tokens = {"input": 0, "output": 0}
        prompts: list[str] = []
        rounds = [list(r) for r in rounds or []]
        best, best_source, evals, last_round, signals = None, self.task.start_source, 0, [], []
        resume = [s for s in resume or [] if s.technique != "provider-error"]
        if resume:
            steps = list(resume)
            kept = {s.index for s in steps}
            rounds = [r for r in ([i for i in r if i in kept] for r in rounds) if r]
            best, best_source, evals, last_round, signals, tokens = self._resumed(steps, rounds)
        elif self.task.start_source.strip():       # a KernelBench problem has no start kernel
            path, outcome = self.judge(self.task.start_source, 0)
            start = Step(0, "start", None, outcome, 1.0 if outcome.ok else 0.0, kernel=path,
                         seconds=time.monotonic() - began)
            self._record(steps, start)
            best = start if outcome.ok else None
            evals, last_round = 1, [start]
            signals = signals_of(outcome)
        stop = "budget: evaluations"
        while True:
            if evals >= self.budget.evaluations:
                stop = "budget: evaluations"
                break
            if len(steps) >= self.budget.steps:
                stop = "budget: steps"
                break
            if time.monotonic() - began > self.budget.seconds:
                stop = "budget: seconds"
                break
            if tokens["input"] + tokens["output"] >= self.budget.tokens > 0:
                stop = "budget: tokens"
                break
            state = CoderState(self.task, steps, best, best_source, last_round,
                               self.knowledge(signals), signals,
                               self.budget.evaluations - evals, self.samples,
                               evaluator_note(self.task))
            request = build_request(state, reply_tokens(best_source, self.max_tokens,
                                                        self.kernel_chars),
                                    self.temperature)
            if self.keep_prompts:
                prompts.append(request.messages[-1].content)
            round_steps: list[Step] = []
            stopped = None
            # the round's samples first (each a request answered), then their candidates
            # judged together (side by side on a backend), then recorded in order
            samples: list[tuple] = []          # (index, step or proposal, tokens, start)
            index = steps[-1].index + 1 if steps else 1
            for _ in range(self.samples):
                if evals >= self.budget.evaluations:
                    break
                t0 = time.monotonic()
                try:
                    completion = self.provider.complete(request)
                except ProviderError as err:
                    samples.append((index, Step(index, "provider-error", None, Outcome(
                        "error", source="provider", feedback=str(err)), 0.0,
                        reply_error=str(err)), None, t0))
                    stopped = f"{PROVIDER_FAILED}: {err}"
                    break
                used = {"input": completion.input_tokens, "output": completion.output_tokens}
                tokens["input"] += used["input"]
                tokens["output"] += used["output"]
                try:
                    proposal = parse_coder_reply(completion.text, best_source,
                                                 self.kernel_chars)
                except ReplyError as err:
                    samples.append((index, Step(index, "unparsable-reply", None, Outcome(
                        "error", source="planner", feedback=""), 0.0, reply_error=str(err),
                        tokens=used, seconds=time.monotonic() - t0), used, t0))
                    index += 1
                    continue
                if proposal.stop:
                    stopped = f"planner stopped: {proposal.rationale or 'no reason given'}"
                    break
                samples.append((index, proposal, used, t0))
                evals += 1
                index += 1
            judged = iter(self.judge_all([(i, p.source) for i, p, _, _ in samples
                                          if not isinstance(p, Step)]))
            for index, proposal, used, t0 in samples:
                if isinstance(proposal, Step):
                    self._record(steps, proposal)
                    if proposal.technique != "provider-error":
                        round_steps.append(proposal)
                    continue
                path, outcome = next(judged)
                reward = (best.outcome.time_ms / outcome.time_ms if best and outcome.ok
                          and outcome.time_ms else 1.0 if outcome.ok else 0.0)
                if proposal.prose_invariants:
                    outcome.feedback += ("\nnot checked (prose): " + "; ".join(
                        proposal.prose_invariants) + " - state them as {\"after\", "
                        "\"assert\"} to have argus check prove them")
                step = Step(index, proposal.technique, None, outcome, reward,
                            [i["assert"] for i in proposal.checked_invariants]
                            + proposal.prose_invariants, proposal.rationale, tokens=used,
                            seconds=time.monotonic() - t0, kernel=path)
                self._record(steps, step)
                round_steps.append(step)
                if outcome.ok:
                    signals = signals_of(outcome)
            if round_steps:
                rounds.append([s.index for s in round_steps])
            winners = [s for s in round_steps if s.outcome.ok and s.outcome.time_ms]
            if winners:
                fastest = min(winners, key=lambda s: (s.outcome.time_ms, s.index))
                if best is None or fastest.outcome.time_ms < best.outcome.time_ms:
                    best = fastest
                    best_source = Path(fastest.kernel).read_text(encoding="utf-8")
            last_round = round_steps
            if stopped:
                stop = stopped
                break
        return KernelRun(self.task, steps, best, best_source, stop, evals, tokens,
                         time.monotonic() - began, prompts, rounds)
