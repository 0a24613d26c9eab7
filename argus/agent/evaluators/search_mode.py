"""The search-mode evaluation: the harness's checks and timing, fewer of them.

A search (the planner's steps, the hand-picked list) needs each configuration's verdict and
a speed good enough to rank it; the final comparison re-times the winners with the full
harness (argus.bench.evaluate: 2 checks over both input distributions, 2 same-buffer
checks, 10 rounds of timing, the re-check), so a search number never decides the verdict.
One search-mode evaluation, in the same worker child and under the same tamper watch:

1. one correctness check on fresh inputs (argus.bench.oracle.check_once: outputs poisoned,
   the candidate run twice over two poisons so unwritten elements show, torch.matmul's
   error and the candidate's against the float64 reference of the inputs upcast);
2. on CUDA, a short timing (argus.bench.evaluate.measure with the job's timing; search jobs
   carry jobs.SEARCH_TIMING: 2 alternating rounds of 3 warm-up + 10 timed calls each for the
   candidate and torch.matmul, L2 flushed before each call, CUDA graphs over rotated input
   copies when a call is shorter than 50 us, the device-synchronised second clock that
   catches work on other streams);
3. the re-check after timing on the very buffers that were timed.

The inputs come from the job's problem (device_inputs.py in search jobs: drawn on the
device, the cost that dominated the full harness).
"""
from __future__ import annotations

import torch

from argus.bench.evaluate import TIMING_SEED_OFFSET, measure
from argus.bench.inputs import DISTRIBUTIONS, check_seed
from argus.bench.oracle import OutputHistory, check_once
from argus.bench.timing import EventClock, L2Flusher, TimingConfig


def search_evaluate(problem, candidate, peer=None, *, device="cpu", seed: int = 0,
                    distribution: str = "normal", timing: TimingConfig | None = None,
                    tol=None, clock=None, flusher=None) -> dict:
    """The harness's result dict (argus.bench.results' keys; "mode": "search") for one
    check, a short timing and the re-check; status "ok" only when all passed."""
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"unknown input distribution {distribution!r}; use one of "
                         f"{DISTRIBUTIONS}")
    peer = peer or problem.peer
    history = OutputHistory()
    report = check_once(problem, candidate, peer, seed=check_seed(seed, 0),
                        distribution=distribution, device=device, tol=tol, history=history)
    out = {"mode": "search", "problem": problem.describe(), "device": str(device),
           "seed": seed, "checks": [report.to_dict()], "timing": None, "recheck": None}
    if not report.passed:
        return {**out, "status": "incorrect", "reasons": list(dict.fromkeys(report.reasons))}
    if timing is None:
        return {**out, "status": "ok", "reasons": [],
                "timing": {"skipped": "no timing asked for"}}
    if torch.device(device).type != "cuda" and clock is None:
        return {**out, "status": "ok", "reasons": [],
                "timing": {"skipped": "timing needs a CUDA device; correctness check only"}}
    clock = clock or EventClock(device)
    flusher = flusher or L2Flusher(device)
    timed, inputs, c_outs = measure(problem, candidate, peer, device=device, config=timing,
                                    clock=clock, flusher=flusher,
                                    seed=check_seed(seed, TIMING_SEED_OFFSET))
    out["timing"] = timed
    recheck = check_once(problem, candidate, peer, seed=check_seed(seed, TIMING_SEED_OFFSET + 1),
                         device=device, tol=tol, history=history, input_buffers=inputs,
                         output_buffers=c_outs, label="after timing")
    out["recheck"] = recheck.to_dict()
    if not recheck.passed:
        return {**out, "status": "incorrect_after_timing", "reasons": recheck.reasons}
    if timed["escaped_stream_work"]:
        return {**out, "status": "escaped_stream",
                "reasons": ["the candidate's device-synchronized time far exceeds its event "
                            "time: work runs outside the timed stream"]}
    return {**out, "status": "ok", "reasons": []}
