"""What a run leaves for the library (argus/agent/library_results.py): a CPU run in the
library's space writes a configuration argus.ops.matmul accepts and runs (the interpreter
here), recorded in the tuning cache as the cost model's prediction, never as a measured
time; matmul takes a prediction only where nothing measured (a cache entry, the tuned
table) says otherwise; a run over the cost model's whole table has its best refused with
matmul's reason and writes nothing; a dtype with no kernel is refused before anything runs."""
import json
import sys

import pytest

from argus.agent.optimize import run_episode
from argus.agent.planner import Budget
from argus.agent.providers import ProviderConfig
from argus.agent.task import GemmTask
from argus.cli.main import main
from argus.ops.tune_cache import TuneCache, entry_key

torch = pytest.importorskip("torch")

import argus.ops as ops  # noqa: E402
from argus.ops import autotune  # noqa: E402

matmul_module = sys.modules["argus.ops.matmul"]
M, N, K = 64, 64, 128
H200_KEY = entry_key("NVIDIA H200", "bf16", "kn", M, N, K)


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ARGUS_INTERPRET", "1")
    monkeypatch.delenv("ARGUS_AUTOTUNE", raising=False)
    monkeypatch.delenv("ARGUS_GEMM_TUNED", raising=False)
    autotune._caches.clear()
    matmul_module._chosen.clear()


@pytest.fixture
def plans(monkeypatch):
    seen = []
    real = matmul_module.plan
    monkeypatch.setattr(matmul_module, "plan",
                        lambda layout, m, n, k, dtype, knobs: seen.append(dict(knobs)) or
                        real(layout, m, n, k, dtype, knobs))
    return seen


def operands():
    g = torch.Generator().manual_seed(0)
    return torch.randn(M, K, generator=g).bfloat16(), torch.randn(K, N, generator=g).bfloat16()


def _library_run(tmp_path):
    return run_episode(GemmTask(M, N, K), ProviderConfig(), evaluator="cpu", space="library",
                       budget=Budget(evaluations=3), db=False, out_dir=tmp_path / "out")


def test_a_cpu_run_in_the_library_space_writes_what_matmul_runs(tmp_path):
    run = _library_run(tmp_path)
    written = json.loads((tmp_path / "out" / "best_config.json").read_text())
    assert written["library"] == {"accepted": True, "refusal": ""}
    assert written["basis"] == "predicted" and written["source"] == "cpu-cost-model-library"
    knobs = written["matmul_knobs"]
    assert knobs == run["summary"]["best_config"]
    a, b = operands()
    c = torch.empty(M, N, dtype=torch.bfloat16)
    ops.matmul(a, b, out=c, **knobs)                      # the op takes it as written
    assert torch.allclose(c.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-1)
    # in the tuning cache as a prediction: no time, the model's milliseconds apart
    assert run["summary"]["meta"]["tune_cache_key"] == H200_KEY
    entry = TuneCache().entries()[H200_KEY]
    assert entry["basis"] == "predicted" and entry["time_ms"] is None
    assert entry["predicted_ms"] > 0 and "cost model" in entry["source"]
    assert TuneCache().knobs(H200_KEY) is None and TuneCache().predicted(H200_KEY) == knobs
    report = (tmp_path / "out" / "report.md").read_text()
    assert "accepted by argus.ops.matmul; its speed is predicted" in report


def test_matmul_takes_a_prediction_only_where_nothing_measured_says_otherwise(
        tmp_path, monkeypatch, plans):
    monkeypatch.setattr(matmul_module, "device_name", lambda tensor: "NVIDIA H200")
    predicted = {"BN": 64, "BM": 64, "consumers": 1, "stages": 3}
    assert TuneCache().record(H200_KEY, predicted, None, "test", basis="predicted",
                              predicted_ms=0.01)
    ops.matmul(*operands())
    assert plans[-1] == predicted
    # the tuned table holds the shape: its (measured) choice wins over the prediction
    table = tmp_path / "tuned.json"
    table.write_text(json.dumps({"shapes": {"kn": {f"{M}x{N}x{K}": {"BN": 64, "stages": 2,
                                                                     "BM": 64,
                                                                     "consumers": 1}}}}))
    monkeypatch.setenv("ARGUS_GEMM_TUNED", str(table))
    matmul_module._chosen.clear()
    ops.matmul(*operands())
    assert plans[-1] == {}
    # a measurement replaces the prediction, and a later prediction does not replace it
    measured = {"BN": 64, "BM": 64, "consumers": 1, "stages": 4}
    assert TuneCache().record(H200_KEY, measured, 0.02, "test")
    assert not TuneCache().record(H200_KEY, predicted, None, "test", basis="predicted")
    autotune._caches.clear()
    matmul_module._chosen.clear()
    ops.matmul(*operands())
    assert plans[-1] == measured and TuneCache().predicted(H200_KEY) is None


def test_the_cost_models_whole_table_is_refused_with_the_reason(tmp_path):
    run = run_episode(GemmTask(4096, 4096, 4096), ProviderConfig(), evaluator="cpu",
                      space="model", budget=Budget(evaluations=4), db=False,
                      out_dir=tmp_path / "out")
    written = json.loads((tmp_path / "out" / "best_config.json").read_text())
    assert written["library"]["accepted"] is False
    assert "the DSL GEMM cannot run" in written["library"]["refusal"]
    assert written["matmul_knobs"] is None and written["basis"] == "predicted"
    assert run["summary"]["meta"]["tune_cache_key"] is None
    assert run["summary"]["meta"]["tune_cache_note"].startswith("not written: the DSL GEMM")
    assert not (tmp_path / "cache" / "autotune").exists()


def test_the_command_runs_in_the_library_space_by_default(tmp_path, capsys):
    assert main(["optimize", "gemm", "--shape", f"{M}x{N}x{K}", "--evaluator", "cpu",
                 "--budget", "2", "--workers", "0", "--quiet", "--db", str(tmp_path / "db"),
                 "--out", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "in the library's space" in out and "predicted by the cost model, not measured" in out
    assert "argus.ops.matmul: accepts it; tuning cache: written as predicted" in out


@pytest.mark.parametrize("dtype", ["fp8", "float8", "e4m3"])
def test_a_dtype_with_no_kernel_is_refused_up_front(dtype, tmp_path, capsys):
    assert main(["optimize", "gemm", "--shape", "4096x4096x4096", "--dtype", dtype,
                 "--evaluator", "cpu", "--db", str(tmp_path / "db"),
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "no gemm kernel" in err and "--dtype bfloat16" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists() and not (tmp_path / "db").exists()


def test_the_api_refuses_it_too():
    from argus.agent.task import TaskError
    with pytest.raises(TaskError, match="no gemm kernel"):
        run_episode(GemmTask(256, 256, 256, "float8"), ProviderConfig(), evaluator="cpu",
                    db=False)
