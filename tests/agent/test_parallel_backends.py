"""The evaluation backends of argus/agent/parallel/ on this machine: the local process pool
gives the serial path's answers, spreads jobs over its workers and tallies them per worker;
timing jobs run one per GPU at a time (fake GPU ids: the pinning is what is tested, the
timing job itself is a stand-in); the GPU evaluator judges parallel timings as it judges
one; Ray is asked for only by name, with a clear error where it is missing."""
import subprocess
import sys

import pytest

from argus.agent.evaluators import GpuEvaluator
from argus.agent.gemm_config import GemmConfig
from argus.agent.parallel import BackendError, LocalPoolBackend, SerialBackend, make_backend
from argus.agent.task import GemmTask

from tests.agent import parallel_jobs

JOB = "tests.agent.parallel_jobs:rendezvous"


def test_the_local_pool_gives_the_serial_answers_and_spreads_the_work(tmp_path):
    args = [{"folder": str(tmp_path / "meet"), "want": 2, "value": v} for v in range(6)]
    serial = SerialBackend()
    expected = serial.map("verify", JOB, [{**a, "want": 1, "folder": str(tmp_path / "s")}
                                          for a in args])
    with LocalPoolBackend(workers=2) as pool:
        got = pool.map("verify", JOB, args)
        workers = pool.workers()
    assert got == expected == [v * v for v in range(6)]
    assert len(workers) == 2                                  # both processes worked
    assert sum(n["verify"] for n in workers.values()) == 6
    assert all(n["time"] == 0 for n in workers.values())
    assert list(serial.workers().values()) == [{"verify": 6, "time": 0}]


def test_a_job_that_raises_fails_its_future_only(tmp_path):
    with LocalPoolBackend(workers=1) as pool:
        bad = pool.submit("verify", "tests.agent.parallel_jobs:no_such_function", 1)
        good = pool.submit("verify", JOB, {"folder": str(tmp_path), "want": 1, "value": 3})
        with pytest.raises(AttributeError):
            bad.result()
        assert good.result() == 9


def test_timing_jobs_run_one_per_gpu_at_a_time(tmp_path):
    args = [{"folder": str(tmp_path), "value": v, "sleep": 0.3} for v in range(6)]
    with LocalPoolBackend(workers=1, gpus=2) as pool:
        results = pool.map("time", "tests.agent.parallel_jobs:timed", args)
        workers = pool.workers()
    gpus, clashes, jobs = parallel_jobs.overlaps(tmp_path)
    assert jobs == 6 and gpus == ["0", "1"] and clashes == []
    assert [r["value"] for r in results] == list(range(6))
    assert sorted(w.split(" gpu ")[1] for w in workers) == ["0", "1"]
    assert sum(n["time"] for n in workers.values()) == 6


def test_timing_without_a_gpu_says_so():
    with LocalPoolBackend(workers=1, gpus=0) as pool:
        with pytest.raises(BackendError, match="needs a GPU"):
            pool.submit("time", "tests.agent.parallel_jobs:timed", {})


def test_the_gpu_evaluator_judges_parallel_timings_as_single_ones():
    task = GemmTask(256, 1536, 512)
    configs = [GemmConfig(BM=128, BN=bn, BK=64, stages=4, consumers=2, warp_specialized=True,
                          raster="m", persistent=True) for bn in (64, 128, 192, 256)]
    configs.append(GemmConfig(BM=256, BN=256, BK=128, stages=8))      # over the limits
    one = GpuEvaluator(parallel_jobs.fake_benchmark)
    expected = [one.evaluate(c, task).to_json() for c in configs]
    with LocalPoolBackend(workers=1, gpus=2) as pool:
        got = [o.to_json() for o in GpuEvaluator(parallel_jobs.fake_benchmark).evaluate_many(
            configs, task, pool, "tests.agent.parallel_jobs:fake_benchmark")]
        timed = sum(n["time"] for n in pool.workers().values())
    assert got == expected
    assert [o["status"] for o in got] == ["ok", "ok", "incorrect", "ok", "invalid"]
    assert timed == 4                         # the invalid one never reached a GPU


def test_ray_is_imported_only_when_asked_and_its_absence_is_explained(monkeypatch):
    code = ("import sys, argus.agent.optimize, argus.cli.optimize_cmd; "
            "from argus.agent.parallel import make_backend; make_backend(None, 0); "
            "print('ray' in sys.modules)")
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
    assert child.stdout.strip() == "False", child.stderr
    assert isinstance(make_backend(None, 0), SerialBackend)
    assert isinstance(make_backend(None, 2), LocalPoolBackend)
    monkeypatch.setitem(sys.modules, "ray", None)         # as if it were not installed
    with pytest.raises(BackendError, match=r"pip install 'argus-kernels\[ray\]'"):
        make_backend("auto")


@pytest.mark.parametrize("address,message", [
    ("127.0.0.1:1", "nothing answers at 127.0.0.1:1"),
    ("ray://127.0.0.1:1", "nothing answers at 127.0.0.1:1"),
    ("nonsense", "is not 'auto', 'local', HOST:PORT"),
])
def test_an_address_with_no_cluster_is_refused_at_once(address, message):
    from argus.agent.parallel.ray_backend import unreachable

    assert message in unreachable(address)
    assert unreachable("auto") == "" and unreachable("local") == ""


def test_the_command_refuses_a_dead_ray_address_without_waiting(tmp_path, capsys):
    pytest.importorskip("ray")
    from argus.cli.main import main

    assert main(["optimize", "gemm", "--shape", "4096x4096x4096", "--evaluator", "cpu",
                 "--ray", "127.0.0.1:1", "--db", str(tmp_path / "db"),
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "nothing answers at 127.0.0.1:1" in err and err.count("\n") == 1


def test_a_cancelled_job_never_runs(tmp_path):
    args = [{"folder": str(tmp_path), "value": v, "sleep": 0.5} for v in range(4)]
    pool = LocalPoolBackend(workers=1)
    futures = [pool.submit("verify", "tests.agent.parallel_jobs:timed", a) for a in args]
    assert futures[-1].cancel()
    assert [f.result()["value"] for f in futures[:-1]] == [0, 1, 2]
    pool.close()
    assert sorted(p.name for p in tmp_path.glob("*.txt")) == ["0.txt", "1.txt", "2.txt"]
    assert sum(n["verify"] for n in pool.workers().values()) == 3
