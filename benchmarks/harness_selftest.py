"""Self-test of the evaluation harness: an honest peer and a set of cheats.

On a GPU: times torch.matmul against itself (ratio about 1.0 expected), at 4096^3 with
events and at 256^3 with CUDA graphs, and shows that each cheat is rejected (zeros, a
cached output replayed, half the output written, work on a side stream without joining
it, a side stream once the checks are done, an fp16 downgrade of an fp32 matmul, a
pointer-keyed cache, going stale once timing starts, a patched event timer, a TF32 switch). On a CPU: the
correctness side only; timing is skipped and says so. Every case runs in a child process
under the watchdog. Writes benchmarks/results/harness-selftest-<date>.json (and the honest
run's full record). Exit status 1 if any case is not judged as expected.

    python benchmarks/harness_selftest.py [--small]
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

THIS = os.path.abspath(__file__)
_state: dict = {}


# ----- candidates (destination passing: fn(inputs, outputs)); loaded by the child -----

def honest(inputs, outputs):
    torch.matmul(inputs[0], inputs[1], out=outputs[0])


def zeros(inputs, outputs):
    outputs[0].zero_()


def cached(inputs, outputs):
    if "out" not in _state:
        honest(inputs, outputs)
        _state["out"] = outputs[0].clone()
    outputs[0].copy_(_state["out"])


def half(inputs, outputs):
    rows = inputs[0].shape[0] // 2
    torch.matmul(inputs[0][:rows], inputs[1], out=outputs[0][:rows])


def side_stream(inputs, outputs):
    stream = _state.setdefault("stream", torch.cuda.Stream())
    with torch.cuda.stream(stream):  # never joined back to the current stream
        for _ in range(4):  # more work than the timed stream will see
            torch.matmul(inputs[0], inputs[1], out=outputs[0])


def side_stream_after_checks(inputs, outputs):
    """Joins its side stream from the host during the checks (so they pass), then stops:
    from timing on, the timed stream sees almost none of the work."""
    _state["calls"] = _state.get("calls", 0) + 1
    stream = _state.setdefault("stream", torch.cuda.Stream())
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(4):
            torch.matmul(inputs[0], inputs[1], out=outputs[0])
    if _state["calls"] <= 12:
        stream.synchronize()


def fp16_downgrade(inputs, outputs):
    outputs[0].copy_(torch.matmul(inputs[0].half(), inputs[1].half()))


def pointer_cache(inputs, outputs):
    key = (inputs[0].data_ptr(), inputs[1].data_ptr())
    cache = _state.setdefault("by_pointer", {})
    if key not in cache:
        honest(inputs, outputs)
        cache[key] = outputs[0].clone()
    outputs[0].copy_(cache[key])


def stale_after_warmup(inputs, outputs):
    _state["calls"] = _state.get("calls", 0) + 1
    if _state["calls"] <= 12:  # the checks' calls (2 per check, 6 checks); lazy from timing on
        honest(inputs, outputs)


def patched_timer(inputs, outputs):
    torch.cuda.Event.elapsed_time = lambda self, end: 1e-3
    honest(inputs, outputs)


def tf32_switch(inputs, outputs):
    torch.backends.cuda.matmul.allow_tf32 = True
    honest(inputs, outputs)


# ----- the cases -----

def cases(small: bool, cuda: bool):
    n_bf16 = 512 if small else 4096
    n_fp32 = 256 if small else 2048
    bf16 = {"m": n_bf16, "n": n_bf16, "k": n_bf16, "dtype": "bfloat16"}
    small_bf16 = {"m": 256, "n": 256, "k": 256, "dtype": "bfloat16"}
    fp32 = {"m": n_fp32, "n": n_fp32, "k": n_fp32, "dtype": "float32"}
    out = [("honest torch.matmul vs itself", "honest", bf16, "ok"),
           ("returns zeros", "zeros", bf16, "reject"),
           ("replays a cached output", "cached", bf16, "reject"),
           ("writes half the output", "half", bf16, "reject"),
           ("fp16 downgrade of an fp32 matmul", "fp16_downgrade", fp32, "reject"),
           ("caches keyed on input pointers", "pointer_cache", bf16, "reject"),
           ("goes stale once timing starts", "stale_after_warmup", bf16, "reject" if cuda else "ok"),
           ("patches torch.cuda.Event.elapsed_time", "patched_timer", bf16, "reject"),
           ("switches TF32 on", "tf32_switch", fp32, "reject")]
    if cuda:
        out.insert(1, ("honest, short launch (CUDA graphs)", "honest", small_bf16, "ok"))
        out.insert(5, ("works on a side stream without joining", "side_stream", bf16, "reject"))
        out.insert(6, ("side stream once the checks are done", "side_stream_after_checks", bf16,
                       "reject"))
    return out


def main(argv=None) -> int:
    from argus.bench.isolation import run_isolated
    from argus.bench.problems import matmul
    from argus.bench.results import RESULTS_DIR, build_record, git_state, environment, write_record

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="small shapes (quick look)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per case")
    parser.add_argument("--only", default="", help="run only cases whose candidate name "
                        "contains this text")
    args = parser.parse_args(argv)
    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    if not cuda:
        print("no CUDA device: correctness checks only, timing skipped")
    timing = {"warmup": 10, "reps": 100} if cuda else None
    now = dt.datetime.now(dt.timezone.utc)
    summary, failures = [], 0
    for label, fn, shape, expect in cases(args.small, cuda):
        if args.only not in fn:
            continue
        job = {"problem": {"factory": "argus.bench.problems:matmul", "args": shape},
               "candidate": f"{THIS}:{fn}", "device": device, "checks": 4, "seed": 7,
               "timing": timing}
        result = run_isolated(job, timeout_s=args.timeout)
        status = result.get("status")
        record = build_record(f"selftest-{fn}", matmul(**shape), result, device=device,
                              candidate=f"{os.path.basename(THIS)}:{fn}", peer="torch.matmul",
                              now=now)
        verdict_ok = (record["status"] == "ok") == (expect == "ok")
        ratio = (record.get("performance") or {}).get("ratio_to_peer")
        if fn == "honest" and ratio is not None and not 0.8 <= ratio <= 1.25:
            verdict_ok = False
            record["reasons"].append(f"self-ratio {ratio:.3f} is far from 1.0: timing is unfair")
        failures += not verdict_ok
        timing_report = record.get("timing") or {}
        summary.append({"case": label, "candidate": fn, "shape": shape, "expected": expect,
                        "status": record["status"], "as_expected": verdict_ok,
                        "ratio_to_peer": ratio, "timing_mode": timing_report.get("mode"),
                        "escaped_stream_work": timing_report.get("escaped_stream_work"),
                        "device_sync_ms": timing_report.get("device_sync_ms"),
                        "reasons": record["reasons"][:3]})
        if fn == "honest":
            record["name"] = f"selftest-honest-{shape['m']}"
            print("honest record:", write_record(record))
        reason = (record["reasons"] or [""])[0][:110]
        shown = f"{ratio:.3f}" if ratio is not None else "-"
        mode = timing_report.get("mode") or "-"
        escaped = "escaped " if timing_report.get("escaped_stream_work") else ""
        print(f"{'PASS' if verdict_ok else 'FAIL'}  {label:42s} status={record['status']:22s} "
              f"ratio={shown:7s} mode={mode:6s} {escaped}{reason}", flush=True)
    os.makedirs(RESULTS_DIR, exist_ok=True)
    path = os.path.join(RESULTS_DIR, f"harness-selftest-{now.strftime('%Y%m%d-%H%M%S')}.json")
    with open(path, "w") as f:
        json.dump({"date": now.isoformat(timespec="seconds"), "git": git_state(),
                   "environment": environment(device), "timing": "skipped (no CUDA)" if not cuda
                   else timing, "cases": summary}, f, indent=2, default=str)
    print(f"{len(summary) - failures}/{len(summary)} cases judged as expected; wrote {path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
