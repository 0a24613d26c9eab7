"""How long `argus check examples/gemm.py` takes, end to end (target: under 2 s on the
2-core development machine), and the same for flash attention's four specialisations.

    python benchmarks/check_speed.py            # 5 runs of the command in fresh processes
    python benchmarks/check_speed.py --runs 9

Each run is a fresh `python -m argus.cli.main check examples/gemm.py` process (Python
start-up, imports including z3, parsing, IR checks and every verifier pass), timed by
wall clock. A second timing, in this process, splits the verifier time by pass. Writes
benchmarks/results/check_speed.json; exit 1 if the median run is over the target or the
check does not pass.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 2.0
KERNEL = "examples/gemm.py"


def command_runs(runs: int) -> tuple[list[float], int]:
    times, status = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "argus.cli.main", "check", KERNEL],
                              cwd=ROOT, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        status = max(status, done.returncode)
    return times, status


def per_pass() -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    import importlib

    from argus.cli.compile_cmd import load_kernels
    from argus.verify.driver import PASSES

    kernel = load_kernels(ROOT / KERNEL)["gemm"]
    out = {}
    for name in PASSES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        module.check(kernel)                 # warm: z3 loaded, caches filled
        start = time.perf_counter()
        module.check(kernel)
        out[name.rsplit(".", 1)[1]] = round(time.perf_counter() - start, 3)
    return out


# -- flash attention (verify-attention) ------------------------------------------------
# examples/flash_attention.py in its four specialisations (head dim 64/128, causal or not):
# each one a temporary copy with HD and CAUSAL edited, checked by a fresh `argus check`
# process like the GEMM above; every one must verify with no finding under the target.
ATTENTION = "examples/flash_attention.py"
ATTENTION_VARIANTS = [(64, 1), (64, 0), (128, 1), (128, 0)]


def attention_runs(runs: int) -> dict:
    import tempfile
    src = (ROOT / ATTENTION).read_text()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for hd, causal in ATTENTION_VARIANTS:
            text = src.replace("HD = 64 ", f"HD = {hd} ").replace(
                "CAUSAL: const = 1", f"CAUSAL: const = {causal}")
            path = Path(tmp) / f"flash_attention_hd{hd}_causal{causal}.py"
            path.write_text(text)
            times, status, clean = [], 0, True
            for _ in range(runs):
                start = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "argus.cli.main", "check",
                                       str(path)], cwd=ROOT, capture_output=True, text=True)
                times.append(time.perf_counter() - start)
                status = max(status, done.returncode)
                clean = clean and "0 error(s), 0 warning(s)" in done.stdout
            median = statistics.median(times)
            out[f"flash_fwd HD={hd} CAUSAL={causal}"] = {
                "runs_s": [round(t, 3) for t in times], "median_s": round(median, 3),
                "exit_status": status, "no_finding": clean,
                "ok": median < TARGET_S and status == 0 and clean}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    times, status = command_runs(args.runs)
    median = statistics.median(times)
    result = {
        "command": f"argus check {KERNEL}",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "runs_s": [round(t, 3) for t in times],
        "median_s": round(median, 3),
        "min_s": round(min(times), 3),
        "target_s": TARGET_S,
        "exit_status": status,
        "passes_in_process_s": per_pass(),
        "ok": median < TARGET_S and status == 0,
    }
    result["attention"] = {"load_average_before": list(os.getloadavg()),   # verify-attention
                           "kernels": attention_runs(args.runs)}
    result["ok"] = result["ok"] and all(r["ok"] for r in result["attention"]["kernels"].values())
    out = ROOT / "benchmarks" / "results" / "check_speed.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"argus check {KERNEL}: median {median:.2f} s over {args.runs} runs "
          f"(min {min(times):.2f} s, target {TARGET_S} s), exit {status}; "
          f"passes {result['passes_in_process_s']}; wrote {out.relative_to(ROOT)}")
    for name, r in result["attention"]["kernels"].items():           # verify-attention
        print(f"argus check {ATTENTION} ({name}): median {r['median_s']:.2f} s, exit "
              f"{r['exit_status']}, {'no finding' if r['no_finding'] else 'FINDINGS'}")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
