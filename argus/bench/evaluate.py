"""One evaluation in the current process: checks, timing, the re-check after timing.

The worker (isolation.py) calls this after importing the candidate; it can also be called
directly where isolation is not wanted (tests, quick looks). The status is "ok" only when
every check passed before and after timing.
"""
from __future__ import annotations

import torch

from argus.bench.clocks import read_clocks
from argus.bench.graphs import capture, rotation_count
from argus.bench.inputs import Sampler, check_seed
from argus.bench.oracle import OutputHistory, Tolerance, check_once, run_checks
from argus.bench.timing import (EventClock, L2Flusher, TimingConfig, alternate_rounds,
                                device_sync_ms, escaped_stream_work, summarize_pair)

TIMING_SEED_OFFSET = 10_000
SAME_BUFFER_SEED_OFFSET = 20_000


def measure(problem, candidate, peer, *, device, config: TimingConfig, clock, flusher,
            seed: int) -> tuple:
    """Times candidate and peer the same way; returns (report, timing inputs, candidate
    outputs) so the caller can re-check on the very buffers that were timed."""
    inputs = problem.make_inputs(Sampler(seed, "normal", str(device)))
    c_outs, p_outs = problem.make_outputs(inputs), problem.make_outputs(inputs)
    eager = {"candidate": lambda: candidate(inputs, c_outs), "peer": lambda: peer(inputs, p_outs)}
    # The fastest of a few eager calls: launch gaps inflate the median of a short kernel,
    # which is exactly the kernel that needs graphs.
    probe = TimingConfig(warmup=3, reps=10, rounds=1, graphs="never")
    estimate = {k: min(v) for k, v in
                alternate_rounds(eager, clock, probe, before_each=flusher).items()}
    notes = []
    use_graphs = config.graphs == "always" or (
        config.graphs == "auto" and min(estimate.values()) < config.graph_below_ms)
    samples, calls_per_replay = None, 1
    if use_graphs:
        n = rotation_count(problem.bytes_moved(), flusher.l2_bytes, config.graph_min_calls,
                           config.max_rotation_bytes)
        copies = [tuple(t.clone() for t in inputs) for _ in range(n)]
        try:
            graphs = {"candidate": capture(candidate, [(c, problem.make_outputs(c)) for c in copies]),
                      "peer": capture(peer, [(c, problem.make_outputs(c)) for c in copies])}
            timed = {k: g.replay for k, g in graphs.items()}
            raw = alternate_rounds(timed, clock, config)
            samples = {k: [t / n for t in v] for k, v in raw.items()}
            calls_per_replay = n
        except RuntimeError as exc:
            notes.append(f"{exc}; timed both without graphs")
    if samples is None:
        timed = eager
        samples = alternate_rounds(eager, clock, config, before_each=flusher)
    report = summarize_pair(samples)
    # The same callables as were timed (graph replays in graph mode), per call.
    sync = {k: device_sync_ms(fn, clock, config.escape_reps) / calls_per_replay
            for k, fn in timed.items()}
    escaped = escaped_stream_work(report["candidate"]["median_ms"], sync["candidate"],
                                  report["peer"]["median_ms"], sync["peer"])
    report.update({"mode": "graphs" if calls_per_replay > 1 else "events",
                   "calls_per_replay": calls_per_replay, "l2_flush_bytes": flusher.nbytes,
                   "estimate_ms": estimate, "device_sync_ms": sync,
                   "escaped_stream_work": escaped, "notes": notes})
    return report, inputs, c_outs


def same_buffer_checks(problem, candidate, peer, *, device, seed: int, tol, history,
                       count: int = 2) -> list:
    """Checks that refill one set of input buffers in place (same addresses, new values):
    a cache keyed on pointers returns stale outputs here."""
    inputs = problem.make_inputs(Sampler(check_seed(seed, SAME_BUFFER_SEED_OFFSET), "normal",
                                         str(device)))
    outs = problem.make_outputs(inputs)
    return [check_once(problem, candidate, peer, seed=check_seed(seed, SAME_BUFFER_SEED_OFFSET + 1 + i),
                       device=device, tol=tol, history=history, input_buffers=inputs,
                       output_buffers=outs, label=f"same buffers {i}")
            for i in range(count)]


def evaluate(problem, candidate, peer=None, *, device="cpu", checks: int = 4, seed: int = 0,
             timing: TimingConfig | None = None, tol: Tolerance | None = None,
             clock=None, flusher=None) -> dict:
    """Checks, then (on CUDA, when `timing` is given) timing and a re-check; a dict for
    results.py. Timing is skipped with a stated reason on the CPU."""
    peer = peer or problem.peer
    history = OutputHistory()
    reports = run_checks(problem, candidate, peer, base_seed=seed, count=checks, device=device,
                         tol=tol, history=history)
    reports += same_buffer_checks(problem, candidate, peer, device=device, seed=seed, tol=tol,
                                  history=history)
    out = {"problem": problem.describe(), "device": str(device),
           "checks": [r.to_dict() for r in reports], "timing": None, "recheck": None}
    failed = [r for r in reports if not r.passed]
    if failed:
        out["status"] = "incorrect"
        out["reasons"] = list(dict.fromkeys(why for r in failed for why in r.reasons))
        return out
    if timing is None:
        out["timing"] = {"skipped": "no timing asked for"}
    elif torch.device(device).type != "cuda" and clock is None:
        out["timing"] = {"skipped": "timing needs a CUDA device; correctness checks only"}
    else:
        clock = clock or EventClock(device)
        flusher = flusher or L2Flusher(device)
        clocks_before = read_clocks() if torch.device(device).type == "cuda" else {"source": None}
        report, inputs, c_outs = measure(problem, candidate, peer, device=device, config=timing,
                                         clock=clock, flusher=flusher,
                                         seed=check_seed(seed, TIMING_SEED_OFFSET))
        report["clocks_before"] = clocks_before
        report["clocks_after"] = read_clocks() if torch.device(device).type == "cuda" else {"source": None}
        out["timing"] = report
        recheck = check_once(problem, candidate, peer, seed=check_seed(seed, TIMING_SEED_OFFSET + 1),
                             device=device, tol=tol, history=history, input_buffers=inputs,
                             output_buffers=c_outs, label="after timing")
        out["recheck"] = recheck.to_dict()
        if not recheck.passed:
            out["status"] = "incorrect_after_timing"
            out["reasons"] = recheck.reasons
            return out
        if report["escaped_stream_work"]:
            out["status"] = "escaped_stream"
            out["reasons"] = ["the candidate's device-synchronized time far exceeds its event "
                              "time: work runs outside the timed stream"]
            return out
    out["status"] = "ok"
    out["reasons"] = []
    return out
