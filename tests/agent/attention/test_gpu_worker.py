"""The GPU worker's correctness gate and the evaluator around it, without a GPU: the check
(O against SDPA in fp32, the log-sum-exp against float64) on the interpreter's output, a
corrupted output rejected, and the evaluator's reading of the worker's results through a
fake session (a wrong answer is "incorrect", a timeout an error, a time under the roofline
"implausible")."""
import pytest

torch = pytest.importorskip("torch")

from argus.agent.attention.config import AttentionConfig  # noqa: E402
from argus.agent.attention.evaluators import GpuAttentionEvaluator, judge  # noqa: E402
from argus.agent.attention.gpu_worker import check, make_inputs  # noqa: E402
from argus.agent.attention.space import AttentionSpace  # noqa: E402
from argus.agent.attention.task import AttentionTask  # noqa: E402


@pytest.mark.parametrize("task", [AttentionTask(1, 2, 1, 100, 130, 64, causal=True),
                                  AttentionTask(1, 2, 2, 64, 64, 64, layout="bshd")],
                         ids=lambda t: t.shape_text)
def test_the_check_passes_the_kernel_and_rejects_a_corrupted_output(task, monkeypatch, tmp_path):
    from argus.ops.attention import attention_into

    monkeypatch.setenv("ARGUS_INTERPRET", "1")
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))
    q, k, v = make_inputs(task, 3, "cpu")
    out = torch.full(q.shape, float("nan"), dtype=q.dtype)
    lse = torch.full((task.b, task.hq, task.sq), float("nan"))
    attention_into(q, k, v, task.causal, task.scale, task.layout, out, lse,
                   knobs=AttentionConfig(BN=64, S=2).to_json())
    assert check(task, q, k, v, out, lse)["reasons"] == []
    bad = out.clone()
    if task.layout == "bhsd":
        bad[0, 1, 7] += 0.5
    else:
        bad[0, 7, 1] += 0.5
    assert any("O max error" in r for r in check(task, q, k, v, bad, lse)["reasons"])
    unwritten = out.clone()
    unwritten.view(-1)[5] = float("nan")
    assert "NaN" in check(task, q, k, v, unwritten, lse)["reasons"][0]


class FakeSession:
    def __init__(self, results):
        self.results, self.jobs, self.environment = list(results), [], {"device_name": "NVIDIA H200"}

    def evaluate(self, job, timeout_s):
        self.jobs.append(job)
        return self.results.pop(0)

    def close(self):
        pass


TASK = AttentionTask(4, 16, 16, 4096, 4096, 128)


def test_the_evaluator_reads_the_workers_verdicts():
    session = FakeSession([
        {"status": "ok", "verdict": "correct", "time_ms": 1.2, "max_error": 0.004},
        {"status": "ok", "verdict": "incorrect", "reasons": ["O max error 0.5 over the bound"]},
        {"status": "timeout", "reasons": ["no result within 90 s"]},
        {"status": "ok", "verdict": "correct", "time_ms": 0.01},
    ])
    ev = GpuAttentionEvaluator(AttentionSpace(build_check=False), session=session)
    cfg = AttentionConfig()
    first = ev.evaluate(cfg, TASK)
    assert first.ok and first.time_ms == 1.2 and first.source == "gpu"
    assert first.tflops == pytest.approx(TASK.flops / 1.2e-3 / 1e12)
    wrong = ev.evaluate(cfg, TASK)
    assert wrong.status == "incorrect" and "O max error" in wrong.feedback
    assert ev.evaluate(cfg, TASK).status == "error"
    assert ev.evaluate(cfg, TASK).status == "implausible"
    seeds = {j["seed"] for j in session.jobs}
    assert len(seeds) == 4                      # fresh inputs for every candidate
    assert session.jobs[0]["config"] == cfg.to_json()


def test_refused_configurations_never_reach_the_worker():
    session = FakeSession([])
    ev = GpuAttentionEvaluator(AttentionSpace(build_check=False), session=session)
    out = ev.evaluate(AttentionConfig(BN=192), TASK)
    assert out.status == "compile_error" and "power of two" in out.feedback
    assert session.jobs == []


def test_judge_refuses_a_result_without_a_time():
    assert judge({"status": "ok", "verdict": "correct"}, TASK).status == "error"
    assert judge("nonsense", TASK).status == "error"


def test_the_worker_protocol_end_to_end_on_the_interpreter(monkeypatch, tmp_path):
    """The evaluator, WorkerSession and the worker child together, the child on the CPU
    interpreter (device "cpu"): a correct configuration is measured, a refused one never
    sent, the child started once."""
    from argus.agent.attention.evaluators import WORKER
    from argus.agent.evaluators.gpu_session import WorkerSession

    monkeypatch.setenv("ARGUS_INTERPRET", "1")
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))
    session = WorkerSession("cpu", module=WORKER)
    ev = GpuAttentionEvaluator(AttentionSpace(build_check=False), session=session,
                               timing={"warmup": 1, "reps": 2}, timeout_s=120)
    task = AttentionTask(1, 2, 1, 70, 100, 64, causal=True)
    try:
        first = ev.evaluate(AttentionConfig(BN=64, S=2), task)
        second = ev.evaluate(AttentionConfig(BN=32, S=3, LPT=1, FOLD_SCALE=1), task)
        refused = ev.evaluate(AttentionConfig(BN=176), task)
    finally:
        ev.close()
    assert first.status == "ok" and first.time_ms > 0, first.feedback
    assert first.details["benchmark"]["timing_mode"] == "eager"
    assert second.status == "ok", second.feedback
    assert refused.status == "compile_error"
    assert len(session.starts) == 1 and session.starts[0]["ok"]
    assert ev.device_name == "interpreter"
