"""The watchdog turns hangs and crashes into results; tampering is reported."""
import os
import time

import pytest

from argus.bench.isolation import run_isolated

HERE = os.path.dirname(os.path.abspath(__file__))


def _job(name, **extra):
    job = {"problem": {"factory": "argus.bench.problems:matmul",
                       "args": {"m": 32, "n": 16, "k": 24, "dtype": "float32"}},
           "candidate": os.path.join(HERE, "candidates", f"{name}.py") + ":matmul",
           "device": "cpu", "checks": 2}
    job.update(extra)
    return job


def test_honest_candidate_runs_ok_in_a_child():
    result = run_isolated(_job("honest"), timeout_s=30)
    assert result["status"] == "ok", result
    assert all(c["passed"] for c in result["checks"])


def test_hanging_candidate_times_out_within_seconds():
    t0 = time.monotonic()
    result = run_isolated(_job("hang"), timeout_s=2)
    assert result["status"] == "timeout"
    assert result["phase"] == "ready"
    assert time.monotonic() - t0 < 2 + 30  # 2 s after the child is ready, plus startup


def test_exiting_candidate_is_reported_crashed_with_its_code():
    result = run_isolated(_job("crash_exit"), timeout_s=30)
    assert result["status"] == "crashed" and result["exit_code"] == 3


def test_segfaulting_candidate_is_reported_crashed_with_the_signal():
    result = run_isolated(_job("crash_segv"), timeout_s=30)
    assert result["status"] == "crashed" and result["exit_code"] == -11
    assert "SIGSEGV" in result["reasons"][0]


def test_patched_timer_and_oracle_are_reported_as_tampering():
    result = run_isolated(_job("patch_timer"), timeout_s=30)
    assert result["status"] == "tampered"
    text = " ".join(result["reasons"])
    assert "Event.elapsed_time" in text and "oracle.judge" in text


def test_a_thread_left_running_is_reported():
    result = run_isolated(_job("thread_writer"), timeout_s=30)
    assert result["status"] == "tampered" and "thread" in " ".join(result["reasons"])


def test_a_missing_candidate_is_an_error_result_not_an_exception():
    result = run_isolated(_job("does_not_exist"), timeout_s=30)
    assert result["status"] == "error" and "does not exist" in result["reasons"][0]


def test_nonpositive_timeout_is_refused():
    with pytest.raises(ValueError, match="positive"):
        run_isolated(_job("honest"), timeout_s=0)


def test_flipping_the_global_tf32_switch_is_reported():
    result = run_isolated(_job("tf32_switch"), timeout_s=30)
    assert result["status"] == "tampered"
    assert "float32_matmul_precision" in " ".join(result["reasons"])
