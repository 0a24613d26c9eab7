"""The process the `profile` tool runs (under ncu, or alone for a timing breakdown).

    python -m argus.agent.profile_target --shape MxNxK (--config JSON | --kernel FILE)
                                         [--launches N] [--timing]

Builds the candidate (the library GEMM at knobs through argus.ops.matmul, or a DSL kernel
file parsed, generated and built as the harness child does), launches it N times on random
inputs; with --timing prints one JSON line: build seconds, first launch, median and min of
CUDA-event timed launches, and torch.matmul's median in the same process. Never imported
by the planner.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def _candidate(args, a, b_kn):
    import torch

    if args.kernel:
        import os

        from argus.agent.kernel_source import b_layout
        from argus.agent.evaluators import gpu_kernel_candidate as cand

        with open(args.kernel, encoding="utf-8") as handle:
            layout = b_layout(handle.read())
        os.environ[cand.KERNEL_ENV] = args.kernel
        b = b_kn.t().contiguous() if layout == "nk" else b_kn
        c = torch.empty((a.shape[0], b_kn.shape[1]), dtype=a.dtype, device=a.device)
        return lambda: cand.gemm((a, b), (c,))
    from argus.ops import matmul

    knobs = json.loads(args.config or "{}")
    c = torch.empty((a.shape[0], b_kn.shape[1]), dtype=a.dtype, device=a.device)
    return lambda: matmul(a, b_kn, out=c, **knobs)


def _times(fn, reps: int) -> list[float]:
    import torch

    out = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end))
    return out


def main(argv=None) -> int:
    import torch

    from argus.agent.task import parse_gemm_shape

    p = argparse.ArgumentParser(prog="argus.agent.profile_target")
    p.add_argument("--shape", required=True)
    p.add_argument("--config", default="")
    p.add_argument("--kernel", default="")
    p.add_argument("--launches", type=int, default=2)
    p.add_argument("--timing", action="store_true")
    p.add_argument("--reps", type=int, default=20)
    args = p.parse_args(argv)
    task = parse_gemm_shape(args.shape)
    dtype = getattr(torch, task.dtype)
    a = torch.randn(task.M, task.K, device="cuda", dtype=dtype)
    b = torch.randn(task.K, task.N, device="cuda", dtype=dtype)
    t0 = time.perf_counter()
    fn = _candidate(args, a, b)
    fn()                                   # builds (or loads the cached cubin) and launches
    torch.cuda.synchronize()
    first_s = time.perf_counter() - t0
    if not args.timing:
        for _ in range(max(0, args.launches - 1)):
            fn()
        torch.cuda.synchronize()
        return 0
    times = _times(fn, args.reps)
    peer = _times(lambda: torch.matmul(a, b), args.reps)
    print(json.dumps({"build_and_first_launch_s": round(first_s, 4),
                      "median_ms": statistics.median(times), "min_ms": min(times),
                      "max_ms": max(times), "reps": args.reps,
                      "tflops": task.flops / (statistics.median(times) / 1e3) / 1e12,
                      "peer_median_ms": statistics.median(peer),
                      "ratio_to_peer": statistics.median(peer) / statistics.median(times)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
