"""A hang is a result: a deliberately deadlocking DSL GEMM (the library's gemm_nt with one
producer parity bug made here: its empty-barrier wait loses the `^ 1`, so the first wait needs
an arrival that only comes after the load) run under the harness's watchdog, then as a debug
build whose bounded mbarrier waits trap and name the barrier and the phase.

    python benchmarks/watchdog_deadlock.py      # on an sm_90 GPU; prints and writes JSON

Expected: the watchdog reports "timeout" within its limit (seconds), and the debug build
fails with "mbarrier wait timed out: barrier '... at gemm_deadlock.py:LINE' ...".
"""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
CORRECT = "wait(empty[s], ((g // S) & 1) ^ 1)"
BUG = "wait(empty[s], (g // S) & 1)"


def _launcher(debug: bool):
    from argus.codegen import generate
    from argus.frontend import parse_source
    from argus.ops.library import KERNEL_DIR
    from argus.runtime import BuildOptions, build_kernel
    from argus.runtime.launch import Launcher

    source = (KERNEL_DIR / "gemm.py").read_text()
    assert CORRECT in source, "the library GEMM's producer wait changed; update the bug"
    ir = parse_source(source.replace(CORRECT, BUG, 1), "gemm_deadlock.py")["gemm_nt"]
    gen = generate(ir)
    defines = (("ARGUS_MBARRIER_WAIT_LIMIT", "2000000"),) if debug else ()
    entry = build_kernel(gen.source, BuildOptions(defines=defines))
    return Launcher(gen, entry.cubin, ir)


def deadlocking(inputs, outputs):
    """The harness candidate: C = A @ B^T with the deadlocking kernel."""
    _launcher(False)(inputs[0], inputs[1], outputs[0])
    import torch
    torch.cuda.synchronize()


def debug_child() -> int:
    import torch
    a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(256, 256, device="cuda", dtype=torch.bfloat16)
    _launcher(True)(a, b, c)
    torch.cuda.synchronize()
    return 0


def main() -> int:
    import torch
    from argus.bench.isolation import run_isolated
    from argus.bench.results import RESULTS_DIR

    if len(sys.argv) > 1 and sys.argv[1] == "--debug-child":
        return debug_child()
    if not torch.cuda.is_available():
        print("watchdog_deadlock.py: needs an sm_90 GPU; nothing run")
        return 0
    job = {"problem": {"factory": "argus.bench.problems:matmul",
                       "args": {"m": 256, "n": 256, "k": 256, "dtype": "bfloat16",
                                "b_layout": "nk"}},
           "candidate": f"{os.path.abspath(__file__)}:deadlocking", "device": "cuda",
           "checks": 2, "seed": 1}
    t0 = time.monotonic()
    print("watchdog: running the deadlocking GEMM under a 10 s watchdog", flush=True)
    result = run_isolated(job, timeout_s=10.0)
    watchdog_s = time.monotonic() - t0
    print(f"watchdog: {result.get('status')} after {watchdog_s:.1f} s (child start "
          f"included): {result.get('reasons')}", flush=True)
    t0 = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--debug-child"],
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as exc:
        proc = subprocess.CompletedProcess(exc.cmd, -9, exc.stdout or "", exc.stderr or "")
        proc.stdout = proc.stdout if isinstance(proc.stdout, str) else proc.stdout.decode()
        proc.stderr = (proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode()) \
            + "\n(debug child still hung after 60 s: killed)"
    debug_s = time.monotonic() - t0
    trap = [line for line in (proc.stdout + proc.stderr).splitlines()
            if "mbarrier wait timed out" in line]
    out = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "device": torch.cuda.get_device_name(),
           "watchdog": {"status": result.get("status"), "reasons": result.get("reasons"),
                        "seconds_incl_child_start": round(watchdog_s, 1), "limit_s": 10.0},
           "debug_build": {"returncode": proc.returncode, "seconds": round(debug_s, 1),
                           "first_trap_lines": trap[:3],
                           "stderr_tail": proc.stderr[-800:]}}
    print(json.dumps(out, indent=2))
    os.makedirs(RESULTS_DIR, exist_ok=True)
    with open(os.path.join(RESULTS_DIR, "watchdog-deadlock.json"), "w") as f:
        json.dump(out, f, indent=2)
    ok = result.get("status") == "timeout" and proc.returncode != 0 and trap
    print("watchdog and debug trap:", "as expected" if ok else "NOT as expected")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
