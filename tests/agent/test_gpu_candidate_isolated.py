"""The isolated path of the GPU evaluator, run on the CPU: the job it builds is accepted by
the harness's worker, the config travels to the child, the candidate calls the backend
with the knobs, and the harness verdict maps back. (Timing needs CUDA; here checks only.)"""
import json

from argus.agent.evaluators import jobs
from argus.agent.evaluators.gpu_candidate import BACKEND_ENV, CONFIG_ENV
from argus.agent.gemm_config import GemmConfig
from argus.agent.task import GemmTask
from argus.bench import run_isolated


def test_worker_runs_the_candidate_with_the_config(tmp_path, monkeypatch):
    config = GemmConfig(BM=128, BN=64, stages=3)
    job = jobs.harness_job(GemmTask(128, 64, 64, "bfloat16"), reps=10)
    job.update(device="cpu", timing=None)
    record = tmp_path / "knobs.json"
    monkeypatch.setenv(CONFIG_ENV, json.dumps(config.to_json()))
    monkeypatch.setenv(BACKEND_ENV, "tests.agent.fake_backend:matmul")
    monkeypatch.setenv("FAKE_BACKEND_RECORD", str(record))
    result = jobs.from_harness(run_isolated(job, timeout_s=120))
    assert result["status"] == "ok", result
    assert json.loads(record.read_text()) == config.to_json()
