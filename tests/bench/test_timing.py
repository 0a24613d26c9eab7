"""Timing logic, driven by a fake device clock on the CPU."""
import pytest
import torch

from argus.bench.evaluate import evaluate
from argus.bench.graphs import rotation_count
from argus.bench.stats import quantile, summarize
from argus.bench.timing import (EventClock, TimingConfig, TimingUnavailable, alternate_rounds,
                                escaped_stream_work, ratio, summarize_pair, time_calls)
from conftest import FakeFlusher, honest


def _kernel(clock, durations):
    it = iter(durations)
    return lambda: clock.advance(next(it))


def test_time_calls_measures_each_call_and_excludes_warmup_and_flush(clock):
    durations = [100.0] * 3 + [1.0, 2.0, 3.0, 4.0, 50.0]
    flusher = FakeFlusher(clock, cost_ms=7.0)
    samples = time_calls(_kernel(clock, durations), clock, reps=5, warmup=3, before_each=flusher)
    assert samples == [1.0, 2.0, 3.0, 4.0, 50.0]
    assert flusher.count == 8
    assert summarize(samples)["median_ms"] == 3.0


def test_quantiles_on_known_samples():
    xs = list(range(1, 12))  # 1..11
    assert quantile(xs, 0.5) == 6
    assert quantile(xs, 0.1) == 2
    assert quantile(xs, 0.9) == 10
    assert quantile([1.0, 2.0], 0.5) == 1.5
    with pytest.raises(ValueError, match="no samples"):
        quantile([], 0.5)


def test_alternating_rounds_and_ratio(clock):
    config = TimingConfig(warmup=1, reps=10, rounds=2)
    kernels = {"candidate": lambda: clock.advance(2.0), "peer": lambda: clock.advance(3.0)}
    samples = alternate_rounds(kernels, clock, config)
    assert len(samples["candidate"]) == 10 and len(samples["peer"]) == 10
    pair = summarize_pair(samples)
    assert pair["candidate"]["median_ms"] == 2.0 and pair["peer"]["median_ms"] == 3.0
    assert pair["ratio"] == pytest.approx(1.5)


def test_median_resists_outliers(clock):
    config = TimingConfig(warmup=1, reps=9, rounds=1)
    slow = iter([1.0] + [1.0] * 7 + [1000.0, 1000.0])
    peer = iter([2.0] * 10)
    samples = alternate_rounds({"candidate": lambda: clock.advance(next(slow)),
                                "peer": lambda: clock.advance(next(peer))}, clock, config)
    assert summarize_pair(samples)["ratio"] == pytest.approx(2.0)


def test_ratio_refuses_nonpositive_time():
    with pytest.raises(ValueError, match="positive"):
        ratio(1.0, 0.0)


def test_escaped_stream_work_flags_only_the_anomalous_gap():
    # Candidate: 0.005 ms by events, 2 ms when the device is synchronised: escaped.
    assert escaped_stream_work(0.005, 2.0, 1.0, 1.05)
    # Honest and launch-bound like the peer: not flagged.
    assert not escaped_stream_work(0.5, 0.52, 1.0, 1.05)
    assert not escaped_stream_work(0.005, 0.02, 0.01, 0.02)


def test_event_clock_refuses_a_cpu_only_machine():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(TimingUnavailable, match="CUDA"):
        EventClock()


def test_rotation_count_exceeds_twice_l2():
    l2 = 60 * 2 ** 20
    n = rotation_count(1 * 2 ** 20, l2, min_calls=20, max_bytes=4 * 2 ** 30)
    assert n * 2 ** 20 > 2 * l2
    big = rotation_count(1e9, l2, min_calls=20, max_bytes=4 * 2 ** 30)
    assert big == 4  # memory-capped, yet two copies would already exceed 2x L2
    assert rotation_count(1e9, l2, min_calls=20, max_bytes=1) == 2


def test_timing_config_rejects_bad_values():
    with pytest.raises(ValueError, match="graphs"):
        TimingConfig(graphs="sometimes")


def _timed(clock, fn, ms):
    def run(inputs, outputs):
        fn(inputs, outputs)
        clock.advance(ms)
    return run


def test_evaluate_with_fake_clock_reports_ratio_and_rechecks(fp32_problem, clock):
    candidate = _timed(clock, honest, 1.0)
    peer = _timed(clock, fp32_problem.peer, 1.5)
    config = TimingConfig(warmup=2, reps=10, graphs="never", escape_reps=3)
    out = evaluate(fp32_problem, candidate, peer, checks=2, timing=config, clock=clock,
                   flusher=FakeFlusher(clock))
    assert out["status"] == "ok", out.get("reasons")
    assert out["timing"]["ratio"] == pytest.approx(1.5)
    assert out["recheck"]["passed"]


def test_a_candidate_that_goes_stale_during_timing_fails_the_recheck(fp32_problem, clock):
    state = {"calls": 0}

    def stale_after_warmup(inputs, outputs):
        state["calls"] += 1
        if state["calls"] <= 8:  # honest during the checks, lazy once timing starts
            honest(inputs, outputs)
        clock.advance(0.1)

    config = TimingConfig(warmup=2, reps=10, graphs="never", escape_reps=3)
    out = evaluate(fp32_problem, stale_after_warmup, _timed(clock, fp32_problem.peer, 1.0),
                   checks=2, timing=config, clock=clock, flusher=FakeFlusher(clock))
    assert out["status"] == "incorrect_after_timing"


def test_evaluate_on_cpu_skips_timing_with_a_reason(fp32_problem):
    out = evaluate(fp32_problem, honest, checks=2, timing=TimingConfig())
    assert out["status"] == "ok" and "CUDA" in out["timing"]["skipped"]


def test_side_stream_cheat_is_flagged_by_evaluate(fp32_problem, clock):
    # Events on the timed stream see almost nothing; the device-wide sync sees the work.
    class SideStreamClock(type(clock)):
        def synchronize(self):
            self.syncs += 1
            self.advance(self.pending)
            self.pending = 0.0

    side = SideStreamClock()
    side.pending = 0.0

    def hidden(inputs, outputs):
        honest(inputs, outputs)
        side.advance(0.001)
        side.pending += 2.0

    config = TimingConfig(warmup=2, reps=10, graphs="never", escape_reps=3)
    out = evaluate(fp32_problem, hidden, _timed(side, fp32_problem.peer, 1.0), checks=2,
                   timing=config, clock=side, flusher=FakeFlusher(side))
    assert out["status"] == "escaped_stream"
