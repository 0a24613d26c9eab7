"""The watchdog turns hangs and crashes into results; tampering is reported.

Every case needs a child process that imports torch (seconds each on a CPU), so the
children are started together once and each test reads its own result.
"""
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from argus.bench.isolation import run_isolated

HERE = os.path.dirname(os.path.abspath(__file__))
HANG_TIMEOUT_S = 2.0
CASES = ("honest", "hang", "crash_exit", "crash_segv", "patch_timer", "thread_writer",
         "tf32_switch", "does_not_exist")


def _job(name):
    return {"problem": {"factory": "argus.bench.problems:matmul",
                        "args": {"m": 32, "n": 16, "k": 24, "dtype": "float32"}},
            "candidate": os.path.join(HERE, "candidates", f"{name}.py") + ":matmul",
            "device": "cpu", "checks": 2}


@pytest.fixture(scope="module")
def results():
    def run(name):
        timeout = HANG_TIMEOUT_S if name == "hang" else 60
        return run_isolated(_job(name), timeout_s=timeout, startup_timeout_s=180)
    with ThreadPoolExecutor(max_workers=len(CASES)) as pool:
        return dict(zip(CASES, pool.map(run, CASES)))


def test_honest_candidate_runs_ok_in_a_child(results):
    result = results["honest"]
    assert result["status"] == "ok", result
    assert all(c["passed"] for c in result["checks"])


def test_hanging_candidate_times_out_within_seconds(results):
    result = results["hang"]
    assert result["status"] == "timeout" and result["phase"] == "ready"
    assert HANG_TIMEOUT_S <= result["since_ready_s"] < HANG_TIMEOUT_S + 1.5


def test_exiting_candidate_is_reported_crashed_with_its_code(results):
    result = results["crash_exit"]
    assert result["status"] == "crashed" and result["exit_code"] == 3


def test_segfaulting_candidate_is_reported_crashed_with_the_signal(results):
    result = results["crash_segv"]
    assert result["status"] == "crashed" and result["exit_code"] == -11
    assert "SIGSEGV" in result["reasons"][0]


def test_patched_timer_and_oracle_are_reported_as_tampering(results):
    result = results["patch_timer"]
    assert result["status"] == "tampered"
    text = " ".join(result["reasons"])
    assert "Event.elapsed_time" in text and "oracle.judge" in text


def test_a_thread_left_running_is_reported(results):
    result = results["thread_writer"]
    assert result["status"] == "tampered" and "thread" in " ".join(result["reasons"])


def test_flipping_the_global_tf32_switch_is_reported(results):
    result = results["tf32_switch"]
    assert result["status"] == "tampered"
    assert "float32_matmul_precision" in " ".join(result["reasons"])


def test_a_missing_candidate_is_an_error_result_not_an_exception(results):
    result = results["does_not_exist"]
    assert result["status"] == "error" and "does not exist" in result["reasons"][0]


def test_nonpositive_timeout_is_refused():
    with pytest.raises(ValueError, match="positive"):
        run_isolated(_job("honest"), timeout_s=0)
