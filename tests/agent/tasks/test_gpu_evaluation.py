"""The GPU evaluator of kernel tasks, on the CPU: how a GPU child's reply becomes an outcome
(a measurement, the ncu profile's signals for the next retrieval), what refuses to run
where (no CUDA device, a ModelNew), and the Nsight Compute run's parsing. The GPU child
itself (gpu_child.py: build, launch, event timing) runs only on a GPU machine; here it runs
in process with CPU tensors standing in for device ones (a kernel through a stand-in
launcher, a ModelNew's kernels through the interpreter's launcher)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from argus.agent.coding.kernel_planner import GPU_EVALUATOR_NOTE, evaluator_note, signals_of
from argus.agent.evaluators.base import Outcome
from argus.agent.tasks import candidate_run, kernel_task
from argus.agent.tasks.candidate_run import profile_child, run_child
from argus.agent.tasks.file_task import file_task
from argus.agent.tasks.kernelbench import kernelbench_task
from argus.cli.errors import UsageError
from argus.cli.optimize_kernel_cmd import choose_device

REPO = Path(__file__).resolve().parents[3]
COPY = REPO / "examples" / "copy.py"
KB = REPO / "tests" / "fixtures" / "kernelbench"
RELU, RELU_NEW = KB / "relu.py", KB / "answers" / "relu_new.py"
GEMM_RELU, GEMM_RELU_NEW = KB / "gemm_relu.py", KB / "answers" / "gemm_relu_new.py"

NCU_CSV = '''==PROF== Connected to process 1
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1","python","h","copy","1","7","","dram__throughput.avg.pct_of_peak_sustained_elapsed","%","85.5"
"0","1","python","h","copy","1","7","","sm__throughput.avg.pct_of_peak_sustained_elapsed","%","20.1"
"0","1","python","h","copy","1","7","","sm__warps_active.avg.pct_of_peak_sustained_active","%","60.0"
'''


def _task(**kw):
    task = file_task(COPY, "copy", {"M": 128, "N": 64}, sets=2)
    for k, v in kw.items():
        setattr(task, k, v)
    return task


def _gpu_reply(task, scale=1.0):
    """What a GPU child sends back for `task`: the expected outputs (times `scale`) and a
    timing."""
    outputs = {f"out{i}.{n}": np.asarray(want[n], np.float32) * scale
               for i, want in enumerate(task.expected) for n in task.outputs}
    gpu = {"time_ms": 0.004, "p10_ms": 0.0039, "p90_ms": 0.0042, "reps": 50,
           "device": "NVIDIA H200", "timing": "events, L2 flushed"}
    return {"ok": True, "gpu": gpu}, outputs


def test_a_gpu_run_is_a_measurement_with_the_profile_signals(monkeypatch):
    task = _task(device="cuda", ncu="/opt/ncu")
    jobs = []

    def fake_child(job, arrays, state=None, timeout_s=0):
        jobs.append(job)
        return _gpu_reply(task)

    monkeypatch.setattr(kernel_task, "run_child", fake_child)
    monkeypatch.setattr(candidate_run, "_run_profile",
                        lambda cmd, env, timeout_s: (0, NCU_CSV, ""))
    outcome = task.evaluate(COPY)
    assert jobs[0]["device"] == "cuda" and jobs[0]["tensors"] == task.tensors
    assert outcome.ok and outcome.source == "gpu" and outcome.time_ms == 0.004
    assert outcome.details["signals"] == ["memory-bound"]
    assert signals_of(outcome) == ["memory-bound"]
    assert "MEASURED on NVIDIA H200" in outcome.feedback
    assert "signals memory-bound" in outcome.feedback


def test_a_wrong_gpu_answer_is_incorrect_and_a_build_failure_a_compile_error(monkeypatch):
    task = _task(device="cuda", ncu=None)
    monkeypatch.setattr(kernel_task, "run_child",
                        lambda job, arrays, state=None, timeout_s=0: _gpu_reply(task, 2.0))
    wrong = task.evaluate(COPY)
    assert wrong.status == "incorrect" and "input set 0" in wrong.feedback
    monkeypatch.setattr(kernel_task, "run_child", lambda job, arrays, state=None, timeout_s=0: (
        {"ok": False, "kind": "build", "error": "ptxas error"}, {}))
    broken = task.evaluate(COPY)
    assert broken.status == "compile_error" and "ptxas error" in broken.feedback


def test_without_ncu_there_are_no_signals_and_no_profile_run(monkeypatch):
    task = _task(device="cuda", ncu=None)
    monkeypatch.setattr(kernel_task, "run_child",
                        lambda job, arrays, state=None, timeout_s=0: _gpu_reply(task))
    monkeypatch.setattr(candidate_run, "_run_profile", lambda *a: pytest.fail("ncu ran"))
    outcome = task.evaluate(COPY)
    assert outcome.ok and outcome.details["signals"] == []
    assert outcome.details["profile"]["kind"] == "unavailable"


def test_the_gpu_child_says_why_it_cannot_run_here():
    """A real child on this CPU-only machine: no CUDA device (or no torch) is a 'device'
    failure with the reason, not a crash."""
    task = _task()
    job, arrays = task._job(COPY)
    reply, out = run_child({**job, "device": "cuda"}, arrays, timeout_s=120)
    assert not reply["ok"] and reply["kind"] == "device", reply
    assert "CUDA" in reply["error"] or "torch" in reply["error"]
    assert out == {}


def test_a_modelnew_on_the_gpu_child_says_why_it_cannot_run_here():
    task = kernelbench_task(RELU, sets=1)
    job, arrays = task._job(RELU_NEW)
    reply, _ = run_child({**job, "device": "cuda"}, arrays, task.state, timeout_s=120)
    assert not reply["ok"] and reply["kind"] == "device", reply
    assert "CUDA" in reply["error"] or "torch" in reply["error"]


def test_ncu_runs_over_a_profiling_child_and_its_table_is_read():
    task = _task()
    job, arrays = task._job(COPY)
    seen = {}

    def runner(cmd, env, timeout_s):
        seen["cmd"], seen["env"] = cmd, env
        return 0, NCU_CSV, ""

    got = profile_child(job, arrays, "/opt/ncu", ["dram__throughput"], "copy", runner=runner)
    assert got["ok"] and got["metrics"]["dram__throughput.avg.pct_of_peak_sustained_elapsed"][
        "value"] == 85.5
    cmd = seen["cmd"]
    assert cmd[0] == "/opt/ncu" and "regex:^copy$" in cmd and cmd[-3:-1] == [
        "-m", "argus.agent.tasks.candidate_child"]
    assert "ARGUS_CACHE_DIR" in seen["env"]
    failed = profile_child(job, arrays, "/opt/ncu", [], "copy",
                           runner=lambda cmd, env, t: (1, "", "ERR_NVGPUCTRPERM"))
    assert not failed["ok"] and "ERR_NVGPUCTRPERM" in failed["error"]


def test_the_device_is_chosen_or_refused_with_the_reason(monkeypatch):
    from argus.agent.evaluators import gpu

    task = _task()
    monkeypatch.setattr(gpu, "cuda_available", lambda: False)
    assert choose_device("auto", task) == "cpu"
    with pytest.raises(UsageError, match="no CUDA GPU here"):
        choose_device("gpu", task)
    monkeypatch.setattr(gpu, "cuda_available", lambda: True)
    assert choose_device("auto", task) == "cuda" and choose_device("cpu", task) == "cpu"
    task.mode = "model"                 # a KernelBench ModelNew: its forward on the GPU too
    assert choose_device("auto", task) == "cuda" and choose_device("gpu", task) == "cuda"


def test_the_prompt_says_which_evaluator_judged():
    assert evaluator_note(_task(device="cuda")) == GPU_EVALUATOR_NOTE
    assert "ESTIMATE" in evaluator_note(_task())
    old = Outcome("ok", tflops=0.0, time_ms=1.0, details={"estimate": {"signals": ["x"]}})
    assert signals_of(old) == ["x"]


class _Clock:
    """A device clock for the child's timing loop: every launch takes 2 us."""

    def __init__(self, *a, **k):
        self.now = 0.0

    def marker(self):
        self.now += 0.001
        return self.now

    def elapsed_ms(self, start, end):
        return 0.002

    def synchronize(self):
        pass


def test_the_gpu_child_builds_runs_and_times_a_kernel_in_process(monkeypatch, tmp_path):
    """gpu_child.run_kernel_on_gpu through candidate_child.run, with CPU tensors standing in
    for device ones, a stand-in launcher that does what the copy kernel does and a fake
    device clock: the runtime's builder is asked for the candidate's kernel, every set's
    outputs come back in the task's dtypes, the timing has its fields."""
    import json as js

    import torch

    from argus.agent.tasks import candidate_child
    from argus.bench import timing
    import argus.runtime.compiled

    built = {}

    class Launcher:
        def __init__(self, kernel):
            built["kernel"] = kernel.name

        def __call__(self, x, y):
            assert x.dtype == torch.float32 and y.dtype == torch.float32   # as declared
            y.copy_(x)

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "stand-in")
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, *a, **k: self)
    monkeypatch.setattr(argus.runtime.compiled, "build_launcher",
                        lambda kernel, debug=False: Launcher(kernel))
    monkeypatch.setattr(timing, "EventClock", _Clock)
    monkeypatch.setattr(timing, "L2Flusher", lambda *a, **k: (lambda: None))
    task = _task()
    job, arrays = task._job(COPY)
    job["device"] = "cuda"
    (tmp_path / "job.json").write_text(js.dumps(job))
    np.savez(tmp_path / "inputs.npz", **arrays)
    reply = candidate_child.run(str(tmp_path))
    assert built["kernel"] == "copy"
    assert reply["ok"] and reply["gpu"]["time_ms"] == 0.002 and reply["gpu"]["reps"] == 50
    assert reply["gpu"]["device"] == "stand-in"
    with np.load(tmp_path / "result.npz") as out:
        got = {k: out[k] for k in out.files}
    assert not task.compare(got)                  # the copy's outputs, both sets
    job["profile"] = True
    (tmp_path / "job.json").write_text(js.dumps(job))
    assert candidate_child.run(str(tmp_path)) == {"ok": True, "profiled": True}


def _cpu_stands_in_for_cuda(monkeypatch):
    import torch

    from argus.bench import timing

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "stand-in")
    monkeypatch.setattr(timing, "EventClock", _Clock)
    monkeypatch.setattr(timing, "L2Flusher", lambda *a, **k: (lambda: None))


def _run_model(task, answer, make_launcher=None):
    """gpu_child.run_model_on_gpu of `answer` for `task` on CPU tensors, its kernels on the
    interpreter's launcher (the runtime's calling convention, the kernel's own semantics)."""
    from argus.agent.tasks import gpu_child
    from argus.agent.tasks.candidate_child import CandidateFailed, Launcher
    from argus.runtime.interpreted import InterpretedLauncher

    job, arrays = task._job(answer)
    seen = []

    def interpreted(ir, failed, label):
        seen.append(ir.name)
        return InterpretedLauncher(ir)
    return (*gpu_child.run_model_on_gpu(job, arrays, task.state, answer.read_text(),
                                        Launcher(job["path"], {}).kernel, CandidateFailed,
                                        make_launcher or interpreted, device="cpu"), seen)


def test_a_modelnew_runs_over_device_tensors_and_its_forward_is_timed(monkeypatch):
    """A KernelBench ModelNew on the GPU path: its glue over torch tensors, its kernel built
    once for its constants and launched on every input set, the outputs right against the
    Model, one forward timed (not capturable on the CPU: called directly, and it says so)."""
    _cpu_stands_in_for_cuda(monkeypatch)
    task = kernelbench_task(RELU, sets=2)
    reply, outputs, built = _run_model(task, RELU_NEW)
    assert reply["ok"] and built == ["relu_rows"]          # built once, launched twice
    assert not task.compare(outputs)
    gpu = reply["gpu"]
    assert gpu["launches_per_forward"] == 1 and gpu["dtype_conversions"] == 0
    assert gpu["time_ms"] == 0.002 and "called directly" in gpu["timing"]
    text = kernel_task.measured_text(gpu, 0.0, [], {"kind": "unavailable"}, task.baselines)
    assert "per forward" in text and "launches 1 kernel" in text


def test_a_modelnew_tensor_is_converted_to_the_kernels_dtype_and_back(monkeypatch):
    """The GEMM's operands are bf16 parameters given float32 glue tensors: converted for
    the launch (and counted), as the interpreter rounds them; the answer is the Model's."""
    _cpu_stands_in_for_cuda(monkeypatch)
    task = kernelbench_task(GEMM_RELU, sets=1)
    reply, outputs, _ = _run_model(task, GEMM_RELU_NEW)
    assert reply["ok"] and reply["gpu"]["dtype_conversions"] == 2, reply
    assert not task.compare(outputs)


def test_a_modelnew_failure_on_the_gpu_path_names_what_failed(monkeypatch, tmp_path):
    from argus.agent.tasks.candidate_child import CandidateFailed

    _cpu_stands_in_for_cuda(monkeypatch)
    task = kernelbench_task(RELU, sets=1)
    wrong = tmp_path / "relu_twice.py"        # the kernel called with one tensor too few
    wrong.write_text(RELU_NEW.read_text().replace("relu_rows(x, y)", "relu_rows(x)"))
    with pytest.raises(CandidateFailed) as err:
        _run_model(task, wrong)
    assert err.value.kind == "launch" and "takes 2 tensors" in str(err.value)

    def broken(ir, failed, label):
        raise failed("build", f"kernel {label}: the generated CUDA did not compile: x")
    with pytest.raises(CandidateFailed) as err:
        _run_model(task, RELU_NEW, broken)
    assert err.value.kind == "build" and "(line" in str(err.value)
    unwritten = tmp_path / "relu_none.py"     # forward allocates, launches nothing
    unwritten.write_text(RELU_NEW.read_text().replace("        relu_rows(x, y)\n", ""))
    with pytest.raises(CandidateFailed) as err:
        _run_model(task, unwritten)
    assert err.value.kind == "glue" and "launched no DSL kernel" in str(err.value)
