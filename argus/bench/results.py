"""Results as JSON: what ran, where, how fast, how accurate, and whether to believe it.

Written under benchmarks/results/<name>-<UTC date and time>.json. The git commit and
whether the harness files (argus/bench) have uncommitted edits are recorded, so a result
produced by an edited harness is visible as such.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess

import torch

from argus.bench.roofline import plausibility

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS_DIR = os.path.join(REPO_ROOT, "benchmarks", "results")

REQUIRED_FIELDS = ("name", "date", "git", "environment", "problem", "status", "reasons",
                   "checks", "timing", "performance")


def _git(*args, strip: bool = True) -> str | None:
    try:
        run = subprocess.run(["git", "-C", REPO_ROOT, *args], capture_output=True, text=True,
                             timeout=10)
        if run.returncode != 0:
            return None
        return run.stdout.strip() if strip else run.stdout
    except (OSError, subprocess.TimeoutExpired):
        return None


def git_state() -> dict:
    """HEAD commit and the harness's uncommitted changes (a list of paths)."""
    dirty = _git("status", "--porcelain", "--", "argus/bench", strip=False)
    return {"commit": _git("rev-parse", "HEAD"),
            "harness_uncommitted": [l[3:] for l in dirty.splitlines() if l.strip()] if dirty else []}


def environment(device: str) -> dict:
    """Device name, versions of driver, CUDA and torch, host and python."""
    env = {"torch": torch.__version__, "cuda_runtime": torch.version.cuda,
           "python": platform.python_version(), "host": platform.node(), "device": str(device),
           "device_name": "cpu", "driver": None,
           "allow_tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32)}
    if str(device).startswith("cuda") and torch.cuda.is_available():
        dev = torch.device(device)
        env["device_name"] = torch.cuda.get_device_name(dev)
        env["capability"] = list(torch.cuda.get_device_capability(dev))
        env["driver"] = _driver_version()
    return env


def _driver_version() -> str | None:
    try:
        run = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
        return run.stdout.strip().splitlines()[0] if run.returncode == 0 and run.stdout else None
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return None


def performance(problem, timing: dict | None, device_name: str) -> dict | None:
    """TFLOP/s, GB/s, ratio to the peer and the roofline flag, from a timing report."""
    if not timing or "candidate" not in timing:
        return None
    perf = {}
    for who in ("candidate", "peer"):
        t = timing[who]["median_ms"] * 1e-3
        perf[who] = {"median_ms": timing[who]["median_ms"], "p10_ms": timing[who]["p10_ms"],
                     "p90_ms": timing[who]["p90_ms"],
                     "tflops": problem.flops() / t / 1e12, "gbytes_per_s": problem.bytes_moved() / t / 1e9}
    perf["ratio_to_peer"] = timing["ratio"]
    perf["plausibility"] = plausibility(timing["candidate"]["median_ms"] * 1e-3, problem.flops(),
                                        problem.bytes_moved(), problem.math_dtype(), device_name,
                                        timing["ratio"])
    return perf


def build_record(name: str, problem, evaluation: dict, *, device: str, candidate: str = "",
                 peer: str = "", now: _dt.datetime | None = None) -> dict:
    """The full JSON record of one evaluation (see REQUIRED_FIELDS and docs/harness.md)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    env = environment(device)
    timing = evaluation.get("timing")
    perf = performance(problem, timing, env["device_name"])
    status = evaluation.get("status")
    if perf and perf["plausibility"]["flag"] and status == "ok":
        status = "implausible"
    return {"name": name, "date": now.isoformat(timespec="seconds"), "git": git_state(),
            "environment": env, "candidate": candidate, "peer": peer,
            "problem": evaluation.get("problem") or problem.describe(),
            "flops": problem.flops(), "bytes": problem.bytes_moved(),
            "status": status, "reasons": evaluation.get("reasons", []),
            "checks": evaluation.get("checks", []), "recheck": evaluation.get("recheck"),
            "timing": timing, "performance": perf,
            "clocks": {"before": (timing or {}).get("clocks_before"),
                       "after": (timing or {}).get("clocks_after")}}


def write_record(record: dict, directory: str | None = None) -> str:
    """Writes `record` as <name>-<YYYYmmdd-HHMMSS>.json; returns the path."""
    missing = [f for f in REQUIRED_FIELDS if f not in record]
    if missing:
        raise ValueError(f"results record lacks fields {missing}; build it with build_record")
    directory = directory or RESULTS_DIR
    os.makedirs(directory, exist_ok=True)
    stamp = _dt.datetime.fromisoformat(record["date"]).strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in record["name"])
    path = os.path.join(directory, f"{safe}-{stamp}.json")
    with open(path, "w") as f:
        json.dump(record, f, indent=2, default=str)
    return path
