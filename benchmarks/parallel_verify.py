"""The verify-speedup of the parallel evaluation backends over the serial path (issue 20,
item 3): --candidates kernels a round (distinct library GEMM specialisations, each proved by the
verifier: abstract interpretation + z3; new kernels every round) verified

- serially, in this process (the reference);
- on the local process pool (argus.agent.parallel.LocalPoolBackend, --workers, default the
  CPU count);
- on a Ray cluster (RayBackend): a private head started on loopback with --workers CPUs,
  or the cluster at --ray ADDRESS; skipped (and said so) when ray is not installed;

checks that every backend's findings equal the serial ones, and writes the seconds, the
speedup and the candidates per worker to benchmarks/results/parallel_verify.json (--out).

The backends are made once (the pool's processes and the Ray cluster live for a whole
`argus optimize` run too) and the same kernels verified in --rounds rounds, the order of
the paths alternating (serial, local, ray, then ray, local, serial, ...), each round with a
fresh verifier and kernels no round verified before (a process answers a kernel it saw
from its caches). The speedup is the median serial seconds
over the median backend seconds; the first round includes the workers' start (imports) and
is listed apart; the Ray cluster's start is measured on its own. On a shared machine the
numbers depend on the load: the file records the load average before and after.

    python benchmarks/parallel_verify.py [--candidates 8] [--rounds 3] [--workers N] [--ray ADDRESS]
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
    """`n` distinct kernels of the library's space (tile width x epilogue x ring depth x
    cluster), in a fixed order."""
    space = LibrarySpace()
    specs = []
    for stages in (2, 1, 3, 4, 5, 6, 7, 8):
        for bn in (128, 256, 64, 192):
            for epilogue in ("direct", "smem_tma", "tma_chunks"):
                for cluster_m in (1, 2):
                    cfg = replace(BASE, BN=bn, stages=stages, epilogue=epilogue,
                                  cluster_m=cluster_m)
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
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ray", default="local", metavar="ADDRESS",
                        help="'local' (a private head on loopback, the default), 'auto', an "
                             "address, or 'none' to skip Ray")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                             "parallel_verify.json"))
    args = parser.parse_args(argv)
    # distinct kernels in every round: a process that verified a kernel before answers
    # from its caches (the frontend's and the verifier's), which is not what is measured
    everything = candidate_specs(args.candidates * args.rounds)
    per_round = [everything[r::args.rounds] for r in range(args.rounds)]
    load_before = os.getloadavg()
    backends: dict = {"serial": None, "local": LocalPoolBackend(args.workers)}
    ray_note = None
    if args.ray != "none":
        try:
            from argus.agent.parallel.ray_backend import RayBackend

            start = time.perf_counter()
            extra = ({"num_cpus": args.workers, "_node_ip_address": "127.0.0.1",
                      "object_store_memory": 100 * 1024 * 1024}
                     if args.ray == "local" else {})
            backends["ray"] = RayBackend(args.ray, **extra)
            ray_note = {"cluster_start_seconds": round(time.perf_counter() - start, 3),
                        "cluster": backends["ray"].describe().get("cluster")}
        except Exception as err:         # ray missing or no cluster: recorded, not fatal
            ray_note = {"skipped": f"{type(err).__name__}: {err}"}
            print(f"ray: skipped: {err}", flush=True)
    names = list(backends)
    rounds: dict = {name: [] for name in names}
    try:
        for r in range(args.rounds):
            for name in (names if r % 2 == 0 else names[::-1]):
                run = timed_run(per_round[r], backends[name])
                rounds[name].append(run)
                print(f"round {r + 1} {name}: {run['seconds']:.1f} s", flush=True)
    finally:
        tallies = {name: (b.workers() if b is not None else None) for name, b in backends.items()}
        for backend in backends.values():
            if backend is not None:
                backend.close()
    serial_findings = [run["findings"] for run in rounds["serial"]]
    identical = {name: [run["findings"] for run in runs] == serial_findings
                 for name, runs in rounds.items()}

    def median(values):
        values = sorted(values)
        mid = len(values) // 2
        return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2

    later = {name: [run["seconds"] for run in runs[1:]] or [runs[0]["seconds"]]
             for name, runs in rounds.items()}
    summary = {}
    for name, runs in rounds.items():
        summary[name] = {
            "seconds_per_round": [run["seconds"] for run in runs],
            "median_seconds_after_first_round": round(median(later[name]), 3),
            "speedup_over_serial": round(median(later["serial"]) / median(later[name]), 3),
            "first_round_speedup_over_serial": round(rounds["serial"][0]["seconds"] /
                                                     runs[0]["seconds"], 3),
            "jobs_by_worker_all_rounds": (tallies[name] if tallies[name] is not None else
                                          {w: n * len(runs) for w, n in
                                           runs[-1]["by_worker"].items()}),
            "verifier_cpu_seconds_last_round": runs[-1]["verifier_cpu_seconds"]}
    if ray_note is not None:
        summary.setdefault("ray", {}).update(ray_note)
    summary["local"]["workers"] = args.workers
    record = {
        "what": "verify-speedup of the parallel evaluation backends over the serial path",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": git_commit(), "cpu_count": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "candidates_per_round": [len(r) for r in per_round],
        "kernels": [f"{m}::{k} " + json.dumps({c: v for c, v in consts if c in
                                                ("BN", "S", "EPILOGUE")})
                    for m, k, consts in everything],
        "rounds": args.rounds,
        "rejected_by_verifier": sum(bool(f) for r in serial_findings for f in r),
        "identical_findings": identical,
        "runs": summary,
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
