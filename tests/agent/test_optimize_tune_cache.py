"""`argus optimize` on the GPU leaves its best configuration in the tuning cache that
argus.ops.matmul reads (argus.agent.optimize.record_best); on the cost model it leaves
nothing. The GPU is a stand-in benchmark here."""

from argus.agent.gemm_config import GemmConfig
from argus.agent.optimize import run_episode
from argus.agent.planner import Budget
from argus.agent.providers import ProviderConfig
from argus.agent.task import GemmTask
from argus.ops.gemm_configs import knobs_to_config
from argus.ops.tune_cache import TuneCache, entry_key
from argus.runtime.launch_errors import LaunchError


LIBRARY_START = GemmConfig(BM=128, BN=128, BK=64, stages=4, consumers=2,
                           warp_specialized=True, raster="m", persistent=True)


def fake_gpu(config, task):
    """argus.ops.matmul as the GPU benchmark sees it: what the library refuses does not
    compile, and wider tiles run faster (a measurement the planner can improve on)."""
    try:
        knobs_to_config(config.to_json(), "kn", task.M, task.N, task.K)
    except LaunchError as err:
        return {"status": "compile_error", "reasons": [str(err)]}
    return {"status": "ok", "time_ms": 0.05 - config.BN * 1e-4, "reasons": []}


def test_the_best_gpu_configuration_goes_into_the_tuning_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))
    task = GemmTask(256, 1024, 512)
    run = run_episode(task, ProviderConfig(), evaluator="gpu", budget=Budget(evaluations=4),
                      db=False, benchmark=fake_gpu, start=LIBRARY_START)
    key = run["summary"]["meta"]["tune_cache_key"]
    best = run["summary"]["best_config"]
    assert key == entry_key("NVIDIA H200", "bf16", "kn", 256, 1024, 512)
    assert best is not None and TuneCache().knobs(key) == best


def test_the_cost_model_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path))
    run = run_episode(GemmTask(256, 1024, 512), ProviderConfig(), evaluator="cpu",
                      budget=Budget(evaluations=2), db=False)
    assert run["summary"]["meta"]["tune_cache_key"] is None
    assert not (tmp_path / "autotune").exists()
