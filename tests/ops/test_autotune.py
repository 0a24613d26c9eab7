"""Opt-in autotuning of argus.ops.matmul (argus/ops/autotune.py) on the CPU: the candidates
run for real on the interpreter (ARGUS_INTERPRET=1) while an injected timer says how long
each took; the winner lands in the cache file and later calls (and later processes) use it;
a configuration `argus optimize` recorded is read the same way."""

import json
import sys

import pytest

torch = pytest.importorskip("torch")

import argus.ops as ops  # noqa: E402
from argus.ops import autotune  # noqa: E402
from argus.ops.gemm_configs import knobs_to_config  # noqa: E402
from argus.ops.tune_cache import default_path, entry_key  # noqa: E402

matmul_module = sys.modules["argus.ops.matmul"]
M, N, K = 64, 64, 128
KEY = entry_key("interpreter", "bf16", "kn", M, N, K)


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("ARGUS_INTERPRET", "1")
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ARGUS_AUTOTUNE", raising=False)
    autotune._caches.clear()            # a fresh process: nothing read or planned yet
    matmul_module._chosen.clear()


@pytest.fixture
def plans(monkeypatch):
    """The knobs of every kernel matmul plans (a spy on matmul.plan)."""
    seen = []
    real = matmul_module.plan
    monkeypatch.setattr(matmul_module, "plan",
                        lambda layout, m, n, k, dtype, knobs: seen.append(dict(knobs)) or
                        real(layout, m, n, k, dtype, knobs))
    return seen


class ScriptedTimer:
    """Runs each candidate once (the launch is real) and reports the scripted milliseconds."""

    def __init__(self, times):
        self.times, self.calls = list(times), 0

    def __call__(self, run):
        run()
        self.calls += 1
        return self.times[self.calls - 1]


def operands(seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(M, K, generator=g).bfloat16(), torch.randn(K, N, generator=g).bfloat16())


def stored():
    return json.loads(default_path().read_text())["entries"]


def test_candidates_start_with_the_untuned_choice_and_are_distinct_kernels():
    for m, n, k, layout in [(16, 4096, 4096, "nk"), (4096, 4096, 4096, "kn"),
                            (1000, 1000, 1000, "kn"), (M, N, K, "kn")]:
        found = autotune.candidates(m, n, k, layout)
        configs = [tuple(sorted(knobs_to_config(c, layout, m, n, k).items())) for c in found]
        assert len(set(configs)) == len(configs) >= 3
        assert configs[0] == tuple(sorted(knobs_to_config({}, layout, m, n, k).items()))
    decode = autotune.candidates(16, 4096, 4096, "nk")
    assert any(c.get("split_k", 1) > 1 for c in decode)       # the SMs need more tiles
    assert any(c.get("BM") == 64 for c in decode)             # 64-row tiles for small M
    assert not any(c.get("split_k", 1) > 1 for c in autotune.candidates(4096, 4096, 4096, "kn"))


def test_first_call_times_every_candidate_and_keeps_the_fastest(monkeypatch, plans):
    found = autotune.candidates(M, N, K, "kn")
    times = [5.0 + i for i in range(len(found))]
    times[2] = 0.5                                            # the third candidate wins
    timer = ScriptedTimer(times)
    monkeypatch.setattr(autotune, "default_timer", timer)
    a, b = operands()
    c = ops.matmul(a, b, autotune=True)
    assert timer.calls == len(found)
    assert stored()[KEY]["knobs"] == found[2] and stored()[KEY]["time_ms"] == 0.5
    assert plans[-1] == found[2]                              # the call ran the winner
    want = a.double() @ b.double()
    assert torch.allclose(c.double(), want, rtol=2 ** -6, atol=0.1)


def test_later_calls_and_later_processes_use_the_winner_without_timing(monkeypatch, plans):
    found = autotune.candidates(M, N, K, "kn")
    monkeypatch.setattr(autotune, "default_timer",
                        ScriptedTimer([1.0] + [9.0] * (len(found) - 1)))
    a, b = operands(1)
    ops.matmul(a, b, autotune=True)

    def no_timing(run):
        raise AssertionError("timed again")

    monkeypatch.setattr(autotune, "default_timer", no_timing)
    autotune._caches.clear()                                  # as a new process would
    matmul_module._chosen.clear()
    plans.clear()
    a2 = torch.randn(40, K).bfloat16()                        # M = 40: the same class (64)
    ops.matmul(a2, b, autotune=True)
    ops.matmul(a2, b)                                         # without autotune: read too
    assert plans == [found[0], found[0]]


def test_a_failing_candidate_is_skipped_and_reported():
    def run(knobs):
        if knobs == {"BN": 128}:
            raise RuntimeError("candidate broke")

    times = iter([3.0, 2.0])
    knobs, ms, report = autotune.tune([{"BN": 256}, {"BN": 128}, {"BN": 64}], run,
                                      timer=lambda r: r() or next(times))
    assert (knobs, ms) == ({"BN": 64}, 2.0)
    assert report[1] == "{'BN': 128}: failed: RuntimeError: candidate broke"


def test_no_candidate_running_is_an_error_that_says_why():
    def broken(knobs):
        raise ValueError("nope")

    with pytest.raises(Exception, match="no configuration that runs.*nope"):
        autotune.tune([{"BN": 64}], broken, timer=lambda run: run())


def test_without_autotuning_nothing_is_timed_or_written(monkeypatch, plans):
    monkeypatch.setattr(autotune, "default_timer", lambda run: pytest.fail("timed"))
    ops.matmul(*operands(2))
    assert not default_path().exists() and plans == [{}]


def test_the_environment_switch_turns_it_on(monkeypatch):
    monkeypatch.setenv("ARGUS_AUTOTUNE", "1")
    timer = ScriptedTimer([1.0] * 20)
    monkeypatch.setattr(autotune, "default_timer", timer)
    ops.matmul(*operands(3))
    assert timer.calls > 1 and KEY in stored()


def test_a_configuration_argus_optimize_recorded_is_what_matmul_runs(plans):
    from argus.agent.gemm_config import GemmConfig
    from argus.agent.optimize import record_best
    from argus.agent.planner import RunResult
    from argus.agent.task import GemmTask
    from argus.agent.trajectory import Step, Trajectory
    from argus.agent.evaluators.base import Outcome

    best = GemmConfig(BM=64, BN=64, BK=64, stages=4, consumers=1, warp_specialized=True,
                      cluster_m=1, raster="m", group=1, persistent=True, split_k=1)
    task = GemmTask(M, N, K)
    traj = Trajectory(task, best)
    traj.steps.append(Step(index=0, technique="start", config=best,
                           outcome=Outcome(status="ok", tflops=1.0, time_ms=0.01,
                                           source="gpu"), reward=1.0))

    class Gpu:
        name, device_name = "gpu", "interpreter"    # the device this test's matmul runs on

    result = RunResult(trajectory=traj, stop_reason="budget", evaluations=1, tokens={},
                       seconds=0.0)
    assert record_best(task, result, Gpu()) == KEY
    autotune._caches.clear()                                  # matmul in a later process
    ops.matmul(*operands(4))
    assert plans == [best.to_json()]


def test_the_cost_models_predictions_are_never_recorded():
    from argus.agent.evaluators import CpuEvaluator
    from argus.agent.gemm_config import SMALLEST
    from argus.agent.optimize import record_best
    from argus.agent.planner import RunResult
    from argus.agent.task import GemmTask
    from argus.agent.trajectory import Step, Trajectory
    from argus.agent.evaluators.base import Outcome

    task = GemmTask(M, N, K)
    traj = Trajectory(task, SMALLEST, [Step(0, "start", SMALLEST, Outcome(
        status="ok", tflops=100.0, time_ms=0.01, source="cost_model"), 1.0)])
    assert record_best(task, RunResult(traj, "budget", 1), CpuEvaluator()) is None
    assert not default_path().exists()


def test_no_tuning_while_a_cuda_graph_is_captured_then_on_the_next_call(monkeypatch, plans):
    timer = ScriptedTimer([1.0] * 20)
    monkeypatch.setattr(autotune, "default_timer", timer)
    monkeypatch.setattr(matmul_module, "capturing", lambda out: True)
    a, b = operands(5)
    ops.matmul(a, b, autotune=True)
    assert timer.calls == 0 and plans == [{}] and not default_path().exists()
    monkeypatch.setattr(matmul_module, "capturing", lambda out: False)
    ops.matmul(a, b, autotune=True)
    assert timer.calls == len(autotune.candidates(M, N, K, "kn")) and KEY in stored()


def test_a_shape_is_planned_once_per_process(plans):
    a, b = operands(6)
    for _ in range(3):
        ops.matmul(a, b)
    assert plans == [{}]
