"""The search-mode evaluation (evaluators/search_mode.py) and its device-drawn inputs
(evaluators/device_inputs.py), on the CPU: one poisoned check against the fp64 reference,
a short timing on a fake device clock, the re-check after timing; cheats still caught."""
import pytest
import torch

from argus.agent.evaluators.device_inputs import draw, matmul
from argus.agent.evaluators.search_mode import search_evaluate
from argus.bench.inputs import Sampler
from argus.bench.timing import TimingConfig

TIMING = TimingConfig(warmup=3, reps=20, rounds=2, graphs="never", escape_reps=3)


class FakeClock:
    """A device clock whose time moves only when a fake kernel says so."""

    def __init__(self):
        self.now_ms, self.pending = 0.0, 0.0

    def marker(self):
        return self.now_ms

    def elapsed_ms(self, start, end):
        return end - start

    def synchronize(self):                  # device-wide: other streams' work lands here
        self.now_ms += self.pending
        self.pending = 0.0

    def host_s(self):
        return self.now_ms / 1e3

    def advance(self, ms):
        self.now_ms += ms


class FakeFlusher:
    def __init__(self):
        self.count, self.l2_bytes, self.nbytes = 0, 60 * 2 ** 20, 120 * 2 ** 20

    def __call__(self):
        self.count += 1


def _timed(clock, ms, fn=None):
    def run(inputs, outputs):
        (fn or (lambda i, o: torch.matmul(i[0], i[1], out=o[0])))(inputs, outputs)
        clock.advance(ms)
    return run


@pytest.fixture
def problem():
    return matmul(48, 40, 64, "float32")


def test_device_drawn_inputs_are_seeded_fresh_and_of_both_distributions():
    p = matmul(64, 32, 128, "bfloat16")
    a1, b1 = p.make_inputs(Sampler(5, "normal", "cpu"))
    a2, b2 = p.make_inputs(Sampler(5, "normal", "cpu"))
    a3, _ = p.make_inputs(Sampler(6, "normal", "cpu"))
    assert a1.dtype == torch.bfloat16 and a1.shape == (64, 128) and b1.shape == (128, 32)
    assert torch.equal(a1, a2) and torch.equal(b1, b2)          # reproducible from the seed
    assert not torch.equal(a1, a3) and not torch.equal(a1[:, :32], b1[:64].T)  # fresh, A != B
    assert a1.float().abs().min() >= 0 and a1.float().std() == pytest.approx(1.0, abs=0.1)
    wide = draw((256, 64), torch.float32, 9, "wide", "cpu")
    assert wide.mean() > 0.5                                      # the non-zero mean
    row_scale = wide.std(dim=1)
    assert row_scale.max() / row_scale.min() > 8                  # per-row scales 2^U(-3,3)
    with pytest.raises(ValueError, match="distribution"):
        draw((4, 4), torch.float32, 1, "uniform", "cpu")
    assert p.describe()["inputs"].startswith("drawn on the device")


def test_one_check_and_no_timing_on_the_cpu(problem):
    out = search_evaluate(problem, _timed(FakeClock(), 0.0), device="cpu", seed=3,
                          timing=TIMING)
    assert out["status"] == "ok" and out["mode"] == "search" and len(out["checks"]) == 1
    assert "CUDA" in out["timing"]["skipped"] and out["recheck"] is None


def test_short_timing_on_a_fake_clock_then_the_recheck(problem):
    clock = FakeClock()
    out = search_evaluate(problem, _timed(clock, 1.0), _timed(clock, 1.5), device="cpu",
                          seed=3, distribution="wide", timing=TIMING, clock=clock,
                          flusher=FakeFlusher())
    assert out["status"] == "ok", out["reasons"]
    assert out["checks"][0]["distribution"] == "wide"
    assert out["timing"]["candidate"]["median_ms"] == pytest.approx(1.0)
    assert out["timing"]["ratio"] == pytest.approx(1.5)
    assert out["timing"]["candidate"]["count"] == 20                 # the short timing
    assert out["recheck"]["passed"]


def test_unwritten_outputs_fail_the_one_check(problem):
    def half(inputs, outputs):
        rows = outputs[0].shape[0] // 2
        torch.matmul(inputs[0][:rows], inputs[1], out=outputs[0][:rows])

    out = search_evaluate(problem, half, device="cpu", seed=1, timing=TIMING)
    assert out["status"] == "incorrect"
    assert any("never written" in r for r in out["reasons"])


def test_a_candidate_that_goes_stale_while_timed_fails_the_recheck(problem):
    clock = FakeClock()
    calls = {"n": 0}

    def stale(inputs, outputs):
        calls["n"] += 1
        if calls["n"] <= 2:                # honest for the check's two runs only
            torch.matmul(inputs[0], inputs[1], out=outputs[0])
        clock.advance(0.5)

    out = search_evaluate(problem, stale, _timed(clock, 1.0), device="cpu", seed=2,
                          timing=TIMING, clock=clock, flusher=FakeFlusher())
    assert out["status"] == "incorrect_after_timing"


def test_work_on_another_stream_is_still_caught(problem):
    clock = FakeClock()

    def hidden(inputs, outputs):
        torch.matmul(inputs[0], inputs[1], out=outputs[0])
        clock.advance(0.001)
        clock.pending += 2.0

    out = search_evaluate(problem, hidden, _timed(clock, 1.0), device="cpu", seed=2,
                          timing=TIMING, clock=clock, flusher=FakeFlusher())
    assert out["status"] == "escaped_stream"


def test_an_unknown_distribution_is_refused(problem):
    with pytest.raises(ValueError, match="distribution"):
        search_evaluate(problem, _timed(FakeClock(), 0.0), device="cpu", distribution="flat")
