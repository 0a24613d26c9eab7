"""The verify-speedup of the parallel evaluation backends over the serial path (issue 20,
item 3): N candidate kernels (distinct library GEMM specialisations, each proved by the
verifier: abstract interpretation + z3) verified

- serially, in this process (the reference);
- on the local process pool (argus.agent.parallel.LocalPoolBackend, --workers, default the
  CPU count);
- on a Ray cluster (RayBackend): a private head started on loopback with --workers CPUs,
  or the cluster at --ray ADDRESS; skipped (and said so) when ray is not installed;

checks that every backend's findings equal the serial ones, and writes the seconds, the
speedup (serial seconds / backend seconds, start-up of the workers included and, for Ray,
also without the cluster's start) and the candidates per worker to
benchmarks/results/parallel_verify.json (--out). On a shared machine the speedup depends on
the load: the file records the load average before and after.

    python benchmarks/parallel_verify.py [--candidates 8] [--workers N] [--ray ADDRESS]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from argus.agent.gemm_config import GemmConfig  # noqa: E402
from argus.agent.library_space import LibrarySpace  # noqa: E402
from argus.agent.library_verifier import LibraryVerifier  # noqa: E402
from argus.agent.parallel import LocalPoolBackend  # noqa: E402
from argus.agent.task import GemmTask  # noqa: E402

TASK = GemmTask(4096, 4096, 4096)
BASE = GemmConfig(BM=128, BN=128, BK=64, stages=2, consumers=2, warp_specialized=True,
                  raster="m", persistent=True)


def candidate_specs(n: int) -> list:
    """`n` distinct kernels of the library's space: ring depths x tile widths x epilogues."""
    space = LibrarySpace()
    specs = []
    for epilogue in ("direct", "smem_tma"):
        for bn in (128, 256, 64):
            for stages in (2, 3, 4, 1):
                cfg = replace(BASE, BN=bn, stages=stages, epilogue=epilogue)
                if space.accepts(cfg, TASK):
                    spec = space.specialisation(cfg, TASK)
                    if spec not in specs:
                        specs.append(spec)
                if len(specs) == n:
                    return specs
    return specs


def timed_run(specs, backend) -> dict:
    verifier = LibraryVerifier(backend=backend)
    start = time.perf_counter()
    findings = verifier.verify_many(specs)
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 3), "findings": findings,
            "by_worker": verifier.workers_used(),
            "verifier_cpu_seconds": round(verifier.seconds, 3)}


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ray", default="local", metavar="ADDRESS",
                        help="'local' (a private head on loopback, the default), 'auto', an "
                             "address, or 'none' to skip Ray")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                             "parallel_verify.json"))
    args = parser.parse_args(argv)
    specs = candidate_specs(args.candidates)
    load_before = os.getloadavg()
    runs = {"serial": timed_run(specs, None)}
    print(f"serial: {runs['serial']['seconds']:.1f} s for {len(specs)} kernels", flush=True)
    start = time.perf_counter()
    with LocalPoolBackend(args.workers) as pool:
        runs["local"] = timed_run(specs, pool)
    runs["local"]["seconds_with_shutdown"] = round(time.perf_counter() - start, 3)
    print(f"local pool ({args.workers} workers): {runs['local']['seconds']:.1f} s", flush=True)
    if args.ray != "none":
        try:
            from argus.agent.parallel.ray_backend import RayBackend

            start = time.perf_counter()
            extra = ({"num_cpus": args.workers, "_node_ip_address": "127.0.0.1"}
                     if args.ray == "local" else {})
            with RayBackend(args.ray, **extra) as cluster:
                started = time.perf_counter() - start
                runs["ray"] = timed_run(specs, cluster)
                runs["ray"]["cluster"] = cluster.describe().get("cluster")
            runs["ray"]["cluster_start_seconds"] = round(started, 3)
            print(f"ray ({args.ray}): {runs['ray']['seconds']:.1f} s (+{started:.1f} s to "
                  f"start the cluster)", flush=True)
        except Exception as err:         # ray missing or no cluster: recorded, not fatal
            runs["ray"] = {"skipped": f"{type(err).__name__}: {err}"}
            print(f"ray: skipped: {err}", flush=True)
    serial = runs["serial"]
    identical = {}
    for name, run in runs.items():
        if "findings" in run:
            identical[name] = run["findings"] == serial["findings"]
            run["speedup_over_serial"] = round(serial["seconds"] / run["seconds"], 3)
            if "cluster_start_seconds" in run:
                run["speedup_including_cluster_start"] = round(
                    serial["seconds"] / (run["seconds"] + run["cluster_start_seconds"]), 3)
    record = {
        "what": "verify-speedup of the parallel evaluation backends over the serial path",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": git_commit(), "cpu_count": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "candidates": len(specs),
        "kernels": [f"{m}::{k} " + json.dumps({c: v for c, v in consts if c in
                                                ("BN", "S", "EPILOGUE")})
                    for m, k, consts in specs],
        "rejected_by_verifier": sum(bool(f) for f in serial["findings"]),
        "identical_findings": identical,
        "runs": {name: {k: v for k, v in run.items() if k != "findings"}
                 for name, run in runs.items()},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps({n: r.get("speedup_over_serial", r.get("skipped"))
                      for n, r in record["runs"].items()}))
    print(f"wrote {out}")
    return 0 if all(identical.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
