"""A quick sweep of GEMM configurations on the GPU, to choose each shape's variant:
`python benchmarks/gemm_sweep.py [--plan default|FILE.json] [--out tuned.json]`.

One process, no subprocess isolation (the candidates are the library's own kernels, not
model-written code): for each (shape, layout, knobs) it builds the kernel, checks it once
on fresh random inputs (output poisoned with NaN, error against an fp64 reference no worse
than a few times cuBLAS's own), then times it and torch.matmul (cuBLAS) the way the harness
does (argus.bench.evaluate.measure: alternating rounds of CUDA events with L2 flushed
before every call, CUDA graphs over rotated inputs when a call is short), with fewer
repetitions than `argus bench gemm`. It prints one line per case, writes every row to
benchmarks/results/gemm-sweep-<date>.json and, with --out, the fastest correct knobs per
(layout, shape) as a tuned table argus.ops.gemm_configs reads (ARGUS_GEMM_TUNED=FILE).
The numbers to report come from `argus bench gemm` (the full harness) run afterwards
with that table.
"""
import argparse
import datetime as dt
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LARGE = [(8192, 8192, 8192), (4096, 4096, 4096), (4096, 12288, 4096), (4096, 28672, 4096),
         (4096, 4096, 14336), (16384, 8192, 2048)]
SKINNY_256 = (256, 8192, 8192)
SKINNY_128 = (128, 4096, 4096)
BM64 = {"BM": 64}


def default_plan():
    """(layout, shape, knobs) cases: the variants worth comparing per shape class."""
    plan = []
    for shape in LARGE:
        for knobs in ({}, {"epilogue": "smem_tma"}, {"cluster_m": 2},
                      {"cluster_m": 2, "epilogue": "smem_tma"}):
            plan.append(("kn", shape, knobs))
    for knobs in ({"BN": 256}, {"BN": 128}, {"BN": 128, "cluster_m": 2},
                  {"BN": 128, "cluster_m": 2, "epilogue": "smem_tma"},
                  {"BN": 256, "cluster_m": 2}, {**BM64, "BN": 128, "cluster_m": 2},
                  {"BN": 128, "split_k": 2}):
        plan.append(("kn", SKINNY_256, knobs))
    for knobs in ({"BN": 64}, {"BN": 64, "split_k": 2}, {**BM64, "BN": 64},
                  {**BM64, "BN": 64, "cluster_m": 2},
                  {**BM64, "BN": 64, "cluster_m": 2, "epilogue": "smem_tma"},
                  {**BM64, "BN": 128, "cluster_m": 2}):
        plan.append(("kn", SKINNY_128, knobs))
    for shape, knobs in ((SKINNY_256, {"BN": 128, "cluster_m": 2}),
                         (SKINNY_256, {"BN": 128}),
                         (SKINNY_128, {**BM64, "BN": 64, "cluster_m": 2}),
                         (SKINNY_128, {"BN": 64, "split_k": 2}),
                         ((4096, 4096, 4096), {"epilogue": "smem_tma"}),
                         ((4096, 4096, 4096), {"cluster_m": 2, "epilogue": "smem_tma"})):
        plan.append(("nk", shape, knobs))
    return plan


def run_case(layout, shape, knobs, clock, flusher, dtype):
    import torch

    from argus.bench.timing import TimingConfig
    from argus.ops import matmul

    m, n, k = shape
    g = torch.Generator(device="cuda").manual_seed(m + 3 * n + 7 * k)
    a = torch.randn(m, k, device="cuda", dtype=dtype, generator=g)
    b = (torch.randn(k, n, device="cuda", dtype=dtype, generator=g) if layout == "kn"
         else torch.randn(n, k, device="cuda", dtype=dtype, generator=g).t())
    out = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    matmul(a, b, out=out, **knobs)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    peer_err = (torch.matmul(a, b).double() - ref).abs().max().item()
    err = (out.double() - ref).abs().max().item()
    ok = bool(torch.isfinite(out).all()) and err <= 4 * peer_err + 1e-3
    del ref
    row = {"layout": layout, "m": m, "n": n, "k": k, "knobs": knobs, "correct": ok,
           "max_error": err, "cublas_error": peer_err}
    if not ok:
        return row
    from argus.bench.evaluate import measure
    from argus.bench.problems import matmul as matmul_problem

    problem = matmul_problem(m=m, n=n, k=k, dtype=str(dtype).replace("torch.", ""),
                             b_layout=layout)
    if layout == "kn":
        candidate = lambda inputs, outs: matmul(inputs[0], inputs[1], out=outs[0], **knobs)  # noqa: E731
    else:
        candidate = lambda inputs, outs: matmul(inputs[0], inputs[1].t(), out=outs[0], **knobs)  # noqa: E731
    # the harness's timing (CUDA graphs over rotated inputs when a call is short, so a
    # 14 us kernel is not timed behind matmul's Python), with fewer repetitions
    cfg = TimingConfig(warmup=5, reps=30, rounds=4)
    report, _, _ = measure(problem, candidate, problem.peer, device="cuda", config=cfg,
                           clock=clock, flusher=flusher, seed=m + n + k)
    cand, peer = report["candidate"]["median_ms"], report["peer"]["median_ms"]
    flops = 2.0 * m * n * k
    row.update({"ms": cand, "cublas_ms": peer, "ratio": peer / cand, "mode": report["mode"],
                "spread_ms": [report["candidate"]["p10_ms"], report["candidate"]["p90_ms"]],
                "cublas_spread_ms": [report["peer"]["p10_ms"], report["peer"]["p90_ms"]],
                "tflops": flops / cand / 1e9, "cublas_tflops": flops / peer / 1e9})
    return row


def _ratios_by_case(rows):
    """(layout, shape, knobs) -> the ratios measured for it, correct runs only; a case
    wrong in any repeat is dropped."""
    cases, wrong = {}, set()
    for r in rows:
        case = (r["layout"], f"{r['m']}x{r['n']}x{r['k']}", json.dumps(r["knobs"], sort_keys=True))
        if "ratio" in r:
            cases.setdefault(case, []).append(r["ratio"])
        else:
            wrong.add(case)
    return {c: v for c, v in cases.items() if c not in wrong}


def main() -> int:
    import torch

    from argus.bench.timing import EventClock, L2Flusher

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--plan", default="default", help="'default' or a JSON file of "
                   "[layout, [m, n, k], knobs] cases")
    p.add_argument("--out", default="", help="write the fastest knobs per shape here")
    p.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"))
    p.add_argument("--repeat", type=int, default=1, help="time the whole plan this many "
                   "times over (interleaved), to see how much a case moves between "
                   "measurements; the table takes each case's median ratio")
    args = p.parse_args()
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    plan = default_plan() if args.plan == "default" else \
        [(c[0], tuple(c[1]), c[2]) for c in json.load(open(args.plan))]
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    clock, flusher = EventClock(), L2Flusher()
    rows = []
    for rep, (layout, shape, knobs) in [(r, c) for r in range(args.repeat) for c in plan]:
        try:
            row = run_case(layout, shape, knobs, clock, flusher, dtype)
        except Exception as exc:     # a refused or failing variant is a result, not a stop
            row = {"layout": layout, "m": shape[0], "n": shape[1], "k": shape[2],
                   "knobs": knobs, "correct": False, "error": f"{type(exc).__name__}: {exc}"}
        row["repeat"] = rep
        rows.append(row)
        shown = (f"ratio {row['ratio']:.3f} ({row['tflops']:.0f} vs {row['cublas_tflops']:.0f} "
                 f"TFLOP/s; p10-p90 {row['spread_ms'][0] * 1e3:.1f}-{row['spread_ms'][1] * 1e3:.1f}"
                 f" vs {row['cublas_spread_ms'][0] * 1e3:.1f}-{row['cublas_spread_ms'][1] * 1e3:.1f}"
                 " us)" if "ratio" in row else f"NOT OK {row.get('error', row.get('max_error'))}")
        print(f"{layout} {'x'.join(map(str, shape))} {json.dumps(knobs)}: {shown}", flush=True)
    best = {}
    for (layout, key, knobs_key), ratios in _ratios_by_case(rows).items():
        ratio = sorted(ratios)[len(ratios) // 2]
        cur = best.setdefault(layout, {}).get(key)
        if cur is None or ratio > cur["ratio"]:
            best[layout][key] = {"knobs": json.loads(knobs_key), "ratio": ratio,
                                 "ratios": ratios}
    print("best per shape:")
    for layout, shapes in best.items():
        for key, v in shapes.items():
            print(f"  {layout} {key}: {v['ratio']:.3f} {json.dumps(v['knobs'])} "
                  f"(runs: {', '.join(f'{x:.3f}' for x in v['ratios'])})")
    now = dt.datetime.now(dt.timezone.utc)
    from argus.bench.results import RESULTS_DIR, environment, git_state
    os.makedirs(RESULTS_DIR, exist_ok=True)
    path = os.path.join(RESULTS_DIR, f"gemm-sweep-{now.strftime('%Y%m%d-%H%M%S')}.json")
    with open(path, "w") as f:
        json.dump({"date": now.isoformat(timespec="seconds"), "git": git_state(),
                   "environment": environment("cuda"), "dtype": args.dtype, "rows": rows,
                   "best": best}, f, indent=2, default=str)
    if args.out:
        table = {layout: {key: v["knobs"] for key, v in shapes.items()}
                 for layout, shapes in best.items()}
        with open(args.out, "w") as f:
            json.dump({"measured": now.isoformat(timespec="seconds"),
                       "device": torch.cuda.get_device_name(), "source": os.path.basename(path),
                       "shapes": table}, f, indent=2)
        print(f"wrote {args.out}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
