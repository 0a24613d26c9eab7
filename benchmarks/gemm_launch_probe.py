"""Where the skinny shapes' slow calls come from: the host cost of one `argus.ops.matmul`
call against torch.matmul's, and one shape timed the harness's way (L2 flushed before each
call, events around it) eagerly and as a one-call CUDA graph replayed after the same
flush, so a gap in which the GPU waits for the host shows as the difference.

    python benchmarks/gemm_launch_probe.py [MxNxK ...]     (default 256x8192x8192)

Prints one line per measurement and writes benchmarks/results/launch-probe-<time>.json.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def host_us_per_call(fn, calls: int = 2000) -> float:
    """Host microseconds per call of `calls` back-to-back calls of a GPU-trivial op."""
    import torch
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    host = time.perf_counter() - t0
    torch.cuda.synchronize()
    return host / calls * 1e6


def timed(fn, flush, reps: int = 200) -> dict:
    """Per-call event times with an L2 flush before each (outside the timed region)."""
    import torch

    from argus.bench.stats import summarize
    from argus.bench.timing import EventClock, time_calls
    samples = time_calls(fn, EventClock(), reps=reps, warmup=10, before_each=flush)
    s = summarize(samples)
    torch.cuda.synchronize()
    return {k: s[k] for k in ("median_ms", "p10_ms", "p90_ms")}


def main(argv) -> int:
    import torch

    from argus.bench.graphs import capture
    from argus.bench.timing import L2Flusher
    from argus.ops import matmul

    shapes = [tuple(int(v) for v in s.split("x")) for s in (argv or ["256x8192x8192"])]
    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "device": torch.cuda.get_device_name()}
    tiny_a = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    tiny_b = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
    out["host_us"] = {"argus": host_us_per_call(lambda: matmul(tiny_a, tiny_b)),
                      "torch": host_us_per_call(lambda: torch.matmul(tiny_a, tiny_b))}
    print("host us per call:", json.dumps(out["host_us"]))
    flush = L2Flusher()
    for m, n, k in shapes:
        for layout in ("kn", "nk"):
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = (torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if layout == "kn"
                 else torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t())
            c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            ours = lambda: matmul(a, b, out=c)                      # noqa: E731
            peer = lambda: torch.matmul(a, b, out=d)                # noqa: E731
            g_ours = capture(lambda i, o: matmul(a, b, out=c), [((), ())])
            g_peer = capture(lambda i, o: torch.matmul(a, b, out=d), [((), ())])
            row = {}
            for name, fn in (("argus_eager", ours), ("torch_eager", peer),
                             ("argus_graph", g_ours.replay), ("torch_graph", g_peer.replay),
                             ("argus_eager_again", ours)):
                row[name] = timed(fn, flush)
                r = row[name]
                print(f"{m}x{n}x{k} {layout} {name}: median {r['median_ms'] * 1e3:.1f} us "
                      f"(p10-p90 {r['p10_ms'] * 1e3:.1f}-{r['p90_ms'] * 1e3:.1f})")
            out[f"{m}x{n}x{k}-{layout}"] = row
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                        f"launch-probe-{time.strftime('%Y%m%d-%H%M%S')}.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
