"""The persistent GPU worker (gpu_session + gpu_worker), run on the CPU with a torch stand-in
for argus.ops.matmul: many configurations in one child, each with its own knobs and the
harness's verdict; a hang is killed by the watchdog, a crash and a patched timer come back
as results; after each failure the next configuration gets a fresh child."""
import json
import time

import pytest

from argus.agent.evaluators.gpu_candidate import BACKEND_ENV
from argus.agent.evaluators.gpu_session import SessionBenchmark, WorkerSession
from argus.agent.gemm_config import GemmConfig
from argus.agent.task import GemmTask

TASK = GemmTask(64, 128, 64, "bfloat16")


@pytest.fixture
def session():
    s = WorkerSession(device="cpu", startup_timeout_s=120)
    yield s
    s.close()


def _bench(session, **kw):
    return SessionBenchmark(timeout_s=kw.pop("timeout_s", 60), device="cpu", session=session, **kw)


def test_one_child_measures_many_configurations_with_their_own_knobs(session, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "tests.agent.fake_backend:matmul")
    record = tmp_path / "knobs.json"
    monkeypatch.setenv("FAKE_BACKEND_RECORD", str(record))
    bench = _bench(session)
    for bn in (128, 256, 192):
        config = GemmConfig(BM=128, BN=bn, stages=3)
        result = bench(config, TASK)
        assert result["status"] == "ok", result
        assert json.loads(record.read_text()) == config.to_json()   # this job's knobs
    assert len(session.starts) == 1 and session.starts[0]["ok"]
    assert session.environment["device"] == "cpu" and session.environment["torch"]
    pid = session.proc.pid
    assert bench(GemmConfig(BM=128, BN=128, stages=4), TASK)["status"] == "ok"
    assert session.proc.pid == pid                                  # still the same child


def test_a_hang_is_killed_and_the_next_configuration_gets_a_fresh_child(session, monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "tests.agent.fake_backend:misbehaving")
    monkeypatch.setenv("FAKE_BACKEND_MISBEHAVE", "hang")
    bench = _bench(session, timeout_s=60)
    assert bench(GemmConfig(BM=128, BN=128), TASK)["status"] == "ok"
    first = session.proc.pid
    bench.timeout_s = 3
    began = time.monotonic()
    hung = bench(GemmConfig(BM=128, BN=64), TASK)
    assert hung["status"] == "timeout" and "3 s" in " ".join(hung["reasons"])
    assert time.monotonic() - began < 20
    assert session.proc is None                                     # killed, not reused
    bench.timeout_s = 60
    assert bench(GemmConfig(BM=128, BN=128, stages=3), TASK)["status"] == "ok"
    assert session.proc.pid != first and len(session.starts) == 2
    assert session.starts[1]["why"] == "after a failed job"


def test_a_crash_and_a_patched_timer_are_results_not_stuck_runs(session, monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "tests.agent.fake_backend:misbehaving")
    bench = _bench(session)
    monkeypatch.setenv("FAKE_BACKEND_MISBEHAVE", "crash")
    crashed = bench(GemmConfig(BM=128, BN=64), TASK)
    assert crashed["status"] == "crashed" and "code 9" in " ".join(crashed["reasons"])
    monkeypatch.setenv("FAKE_BACKEND_MISBEHAVE", "tamper")
    tampered = bench(GemmConfig(BM=128, BN=64), TASK)
    assert tampered["status"] == "tampered"
    assert any("perf_counter" in r for r in tampered["reasons"])
    assert bench(GemmConfig(BM=128, BN=128), TASK)["status"] == "ok"
    assert len(session.starts) == 3


def test_a_limit_lowers_the_watchdog(session, monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "tests.agent.fake_backend:misbehaving")
    monkeypatch.setenv("FAKE_BACKEND_MISBEHAVE", "hang")
    bench = _bench(session, timeout_s=600, limit=lambda: 2.0)     # e.g. a run's deadline
    began = time.monotonic()
    assert bench(GemmConfig(BM=128, BN=64), TASK)["status"] == "timeout"
    assert time.monotonic() - began < 60            # startup + 2 s, not 600 s


def test_search_mode_jobs_check_once_on_fresh_device_drawn_inputs(session, monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "tests.agent.fake_backend:matmul")
    bench = _bench(session, mode="search")
    jobs = [bench.job(GemmConfig(BM=128, BN=128), TASK) for _ in range(2)]
    assert all(j["mode"] == "search" and j["checks"] == 1 for j in jobs)
    assert jobs[0]["problem"]["factory"] == "argus.agent.evaluators.device_inputs:matmul"
    assert jobs[0]["seed"] != jobs[1]["seed"]                         # fresh per job
    assert [j["distribution"] for j in jobs] == ["normal", "wide"]    # both, alternating
    result = bench(GemmConfig(BM=128, BN=128), TASK)
    assert result["status"] == "ok" and result["mode"] == "search", result
    assert result["distribution"] == "normal" and isinstance(result["seed"], int)
    full = bench(GemmConfig(BM=128, BN=128), TASK, mode="full")      # a call may name the mode
    assert full["status"] == "ok" and full["mode"] == "full"
    assert len(session.starts) == 1                                  # one child for both modes


def test_search_mode_still_finds_unwritten_outputs(session, monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "tests.agent.fake_backend:misbehaving")
    monkeypatch.setenv("FAKE_BACKEND_MISBEHAVE", "partial")
    result = _bench(session, mode="search")(GemmConfig(BM=128, BN=64), TASK)
    assert result["status"] == "incorrect"
    assert any("never written" in r for r in result["reasons"]), result["reasons"]


def test_a_patch_of_the_search_modes_own_module_is_tampering(session, monkeypatch):
    monkeypatch.setenv(BACKEND_ENV, "tests.agent.fake_backend:misbehaving")
    monkeypatch.setenv("FAKE_BACKEND_MISBEHAVE", "patch_search")
    result = _bench(session, mode="search")(GemmConfig(BM=128, BN=64), TASK)
    assert result["status"] == "tampered"
    assert any("search_mode.check_once" in r for r in result["reasons"]), result["reasons"]
    assert session.proc is None                                     # the child is not reused


def test_an_unknown_mode_is_refused(session):
    with pytest.raises(ValueError, match="mode"):
        _bench(session, mode="quick")
