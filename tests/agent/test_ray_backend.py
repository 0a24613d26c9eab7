"""The Ray backend against a real Ray head started on loopback by the test (num_cpus=2, two
declared GPU slots, no dashboard): several candidate kernels (library GEMM specialisations)
verified side by side through Ray give exactly the serial path's findings, spread over more
than one Ray worker; timing tasks (num_gpus=1) never share a GPU slot at once. The speedup
over the serial path is measured by benchmarks/parallel_verify.py, not asserted here (a
shared 2-core machine cannot promise one)."""
import json
import os
from dataclasses import replace

import pytest

ray = pytest.importorskip("ray")

from argus.agent.gemm_config import GemmConfig  # noqa: E402
from argus.agent.library_space import LibrarySpace  # noqa: E402
from argus.agent.library_verifier import LibraryVerifier  # noqa: E402
from argus.agent.parallel.ray_backend import RayBackend  # noqa: E402
from argus.agent.task import GemmTask  # noqa: E402

from tests.agent import parallel_jobs  # noqa: E402
from tests.agent.fake_verifier import FakeVerifier  # noqa: E402

TASK = GemmTask(4096, 4096, 4096)
BASE = GemmConfig(BM=128, BN=128, BK=64, stages=2, consumers=2, warp_specialized=True,
                  raster="m", persistent=True)


def candidate_specs():
    """Four distinct kernels, one the verifier rejects (a one-stage ring)."""
    space = LibrarySpace(verifier=FakeVerifier())
    configs = [replace(BASE, stages=1), BASE, replace(BASE, BN=256, stages=3),
               replace(BASE, epilogue="smem_tma", stages=3)]
    return [space.specialisation(c, TASK) for c in configs]


@pytest.fixture(scope="module")
def cluster():
    backend = RayBackend("local", num_cpus=2, num_gpus=2, _node_ip_address="127.0.0.1",
                         object_store_memory=100 * 1024 * 1024)   # small /dev/shm in CI
    try:
        yield backend
    finally:
        backend.close()
    assert not ray.is_initialized()


def test_parallel_verification_on_ray_matches_the_serial_path(cluster):
    specs = candidate_specs()
    serial = LibraryVerifier().verify_many(specs)
    verifier = LibraryVerifier(backend=cluster)
    on_ray = verifier.verify_many(specs)
    assert on_ray == serial
    assert [bool(e) for e in serial] == [True, False, False, False]
    assert any("stage" in line for line in serial[0])
    spread = {w: n for w, n in cluster.workers().items() if n["verify"]}
    assert len(spread) > 1 and sum(n["verify"] for n in spread.values()) == len(specs)
    assert verifier.stats()["backend"] == "ray"
    assert cluster.describe()["cluster"] == {"CPU": 2.0, "GPU": 2.0}


def test_ray_timing_tasks_hold_a_whole_gpu_each(cluster, tmp_path):
    args = [{"folder": str(tmp_path), "value": v, "sleep": 0.3} for v in range(4)]
    results = cluster.map("time", "tests.agent.parallel_jobs:timed", args)
    gpus, clashes, jobs = parallel_jobs.overlaps(tmp_path)
    assert jobs == 4 and clashes == [] and set(gpus) <= {"0", "1"}
    assert [r["value"] for r in results] == list(range(4))


def test_optimize_on_ray_reports_the_candidates_per_worker(cluster, tmp_path, monkeypatch,
                                                           capsys):
    from argus.cli.main import main

    monkeypatch.setenv("ARGUS_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["optimize", "gemm", "--shape", "4096x4096x4096", "--evaluator", "cpu",
                 "--ray", "local", "--budget", "3", "--quiet", "--db", str(tmp_path / "db"),
                 "--out", str(tmp_path / "o")]) == 0        # joins the running cluster
    out = capsys.readouterr().out
    assert "candidates per worker (ray):" in out
    summary = json.loads((tmp_path / "o" / "trajectory.json").read_text())["summary"]
    workers = summary["meta"]["parallel"]["workers"]
    here = f":{os.getpid()}"
    assert sum(n["verify"] for w, n in workers.items() if not w.endswith(here)) > 0
    assert summary["meta"]["parallel"]["backend"] == "ray"
    report = (tmp_path / "o" / "report.md").read_text()
    assert "Candidates per worker (ray backend)" in report
    assert all(f"| {w} | {n['verify']} |" in report for w, n in workers.items())
