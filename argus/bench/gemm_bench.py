"""The DSL GEMM against torch.matmul (cuBLAS): correctness, then timing, same run, same GPU.

    argus bench gemm                    # correctness sweep + timing of the issue's shapes
    argus bench gemm --correctness      # only the correctness sweep (tails, layouts, dtypes)
    argus bench gemm --timing --shapes 4096x4096x4096 --layouts kn,nk --dtypes bf16
    argus bench gemm --random 40 --seed 7   # 40 shapes drawn from LLM families (gemm_shapes)
    argus bench gemm --random 40 --seed 7 --list   # print the draw only (no GPU needed)
    (python benchmarks/gemm.py ... is the same)

Correctness: each shape on fresh random inputs (outputs poisoned first, NaN never passes),
error against an fp64 reference compared with cuBLAS's own error on the same inputs
(argus.bench.oracle). Timing: every case in a child process under the watchdog
(argus.bench.isolation), CUDA events after warm-up, L2 flushed, alternating rounds with
the peer. Writes benchmarks/results/gemm-<kind>-<date>.json; exit 1 if anything failed.
Without a GPU it says so and exits 0 (nothing to measure).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import sys

TIMED_SHAPES = [(8192, 8192, 8192), (4096, 4096, 4096), (4096, 12288, 4096),
                (4096, 28672, 4096), (4096, 4096, 14336), (16384, 8192, 2048),
                (256, 8192, 8192), (128, 4096, 4096)]
# tails in M, N and K, tiny and skinny shapes, both B layouts, both dtypes
CORRECTNESS_SHAPES = [(128, 256, 64), (256, 512, 128), (1, 8, 8), (7, 24, 40), (100, 200, 72),
                      (129, 264, 72), (255, 264, 8), (384, 520, 200), (1000, 1000, 1000),
                      (1024, 1024, 1024), (2048, 2048, 64), (64, 4096, 4096), (4096, 64, 256),
                      (1031, 784, 520), (3000, 2000, 1000), (128, 4096, 4096),
                      (256, 8192, 8192), (4096, 4096, 4096), (513, 1032, 4104), (33, 8, 1032)]
CANDIDATES = {"kn": "argus.ops.candidates:matmul_kn", "nk": "argus.ops.candidates:matmul_nk"}
TORCH_NAMES = {"bf16": "bfloat16", "fp16": "float16"}


def parse_shapes(text):
    return [tuple(int(x) for x in s.split("x")) for s in text.split(",") if s]


def correctness(shapes, layouts, dtypes, device):
    from argus.bench.evaluate import evaluate
    from argus.bench.loading import load_callable
    from argus.bench.problems import matmul

    rows = []
    for dtype in dtypes:
        for layout in layouts:
            for m, n, k in shapes:
                problem = matmul(m, n, k, TORCH_NAMES[dtype], b_layout=layout)
                try:
                    result = evaluate(problem, load_callable(CANDIDATES[layout]), device=device,
                                      checks=2, seed=m * 7 + n * 3 + k)
                    status, reasons = result["status"], result.get("reasons", [])
                    worst = max((m["max_abs"] for c in result["checks"]
                                 for m in c.get("candidate") or []), default=None)
                except Exception as exc:   # a launch error is a failed case, not a crash
                    status, reasons, worst = "error", [f"{type(exc).__name__}: {exc}"], None
                rows.append({"m": m, "n": n, "k": k, "dtype": dtype, "b_layout": layout,
                             "status": status, "reasons": reasons[:3], "max_abs_error": worst})
                print(f"correctness {dtype} {layout} {m}x{n}x{k}: {status} "
                      f"{'; '.join(reasons[:1])}", flush=True)
    return rows


def timing(shapes, layouts, dtypes, device, timeout):
    from argus.bench.isolation import run_isolated
    from argus.bench.problems import matmul
    from argus.bench.results import build_record, write_record

    rows = []
    for dtype in dtypes:
        for layout in layouts:
            for m, n, k in shapes:
                args = {"m": m, "n": n, "k": k, "dtype": TORCH_NAMES[dtype], "b_layout": layout}
                job = {"problem": {"factory": "argus.bench.problems:matmul", "args": args},
                       "candidate": CANDIDATES[layout], "device": device, "checks": 2,
                       "seed": 11, "timing": {"warmup": 10, "reps": 60, "rounds": 6}}
                result = run_isolated(job, timeout_s=timeout)
                record = build_record(f"gemm-{dtype}-{layout}-{m}x{n}x{k}", matmul(**args),
                                      result, device=device, candidate=CANDIDATES[layout],
                                      peer="torch.matmul")
                perf = record.get("performance") or {}
                t = record.get("timing") or {}
                row = {"m": m, "n": n, "k": k, "dtype": dtype, "b_layout": layout,
                       "status": record["status"], "reasons": record["reasons"][:3],
                       "ratio_to_peer": perf.get("ratio_to_peer"),
                       "tflops": (perf.get("candidate") or {}).get("tflops"),
                       "peer_tflops": (perf.get("peer") or {}).get("tflops"),
                       "candidate_ms": (t.get("candidate") or {}).get("median_ms"),
                       "peer_ms": (t.get("peer") or {}).get("median_ms")}
                rows.append(row)
                print(f"timing {dtype} {layout} {m}x{n}x{k}: {row['status']} ratio "
                      f"{row['ratio_to_peer']} ({row['tflops']} vs {row['peer_tflops']} "
                      f"TFLOP/s) {'; '.join(row['reasons'][:1])}", flush=True)
    return rows


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def family_geomeans(rows, shapes) -> dict:
    """Geomean ratio per drawn family, and over the decode-like cases with M <= 64."""
    family = {(s.m, s.n, s.k): s.family for s in shapes}
    ok = [r for r in rows if r["status"] == "ok"]
    groups = {f: [r["ratio_to_peer"] for r in ok if family.get((r["m"], r["n"], r["k"])) == f]
              for f in sorted(set(family.values()))}
    groups["m<=64"] = [r["ratio_to_peer"] for r in ok if r["m"] <= 64]
    return {name: geomean(values) for name, values in groups.items()}


def main(argv=None, prog=None) -> int:
    from argus.bench.gemm_shapes import draw

    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("--correctness", action="store_true", help="only the correctness sweep")
    p.add_argument("--timing", action="store_true", help="only the timing")
    p.add_argument("--shapes", default="", help="MxNxK,... (default: the issue's shapes)")
    p.add_argument("--layouts", default="kn,nk", help="kn (x @ W), nk (x @ W.T)")
    p.add_argument("--dtypes", default="bf16", help="bf16,fp16")
    p.add_argument("--timeout", type=float, default=120.0, help="watchdog seconds per case")
    p.add_argument("--random", type=int, default=None, metavar="N",
                   help="N shapes drawn from LLM families (decode, prefill, odd) instead")
    p.add_argument("--seed", type=int, default=0, help="the seed of --random's draw")
    p.add_argument("--list", action="store_true", help="print --random's draw and stop")
    args = p.parse_args(argv)
    if args.random is not None and args.shapes:
        p.error("--random draws the shapes; leave out --shapes")
    if args.random is not None and args.random < 1:
        p.error(f"--random {args.random}: draw at least one shape")
    drawn = draw(args.random, args.seed) if args.random is not None else []
    if drawn:
        print(f"{len(drawn)} shapes drawn with seed {args.seed}:")
        for s in drawn:
            print(f"  {s.text():>20}  {s.family:<8} {s.source}")
        args.shapes = ",".join(s.text() for s in drawn)
    if args.list:
        if not drawn:
            p.error("--list prints a --random draw; give --random N")
        return 0

    import torch

    from argus.bench.results import RESULTS_DIR, environment, git_state

    if not torch.cuda.is_available():
        print("argus bench gemm: no CUDA GPU here; the DSL GEMM runs on Hopper only "
              "(nothing measured)")
        return 0
    layouts, dtypes = args.layouts.split(","), args.dtypes.split(",")
    both = not (args.correctness or args.timing)
    now = dt.datetime.now(dt.timezone.utc)
    out = {"date": now.isoformat(timespec="seconds"), "git": git_state(),
           "environment": environment("cuda")}
    if drawn:
        out["draw"] = {"count": args.random, "seed": args.seed,
                       "shapes": [vars(s) for s in drawn]}
    failed = 0
    if args.correctness or both:
        shapes = parse_shapes(args.shapes) or CORRECTNESS_SHAPES
        out["correctness"] = correctness(shapes, layouts, dtypes, "cuda")
        failed += sum(r["status"] != "ok" for r in out["correctness"])
    if args.timing or both:
        shapes = parse_shapes(args.shapes) or TIMED_SHAPES
        out["timing"] = timing(shapes, layouts, dtypes, "cuda", args.timeout)
        failed += sum(r["status"] != "ok" for r in out["timing"])
        for dtype in dtypes:
            for layout in layouts:
                sel = [r["ratio_to_peer"] for r in out["timing"]
                       if r["dtype"] == dtype and r["b_layout"] == layout and r["status"] == "ok"]
                g = geomean(sel)
                out.setdefault("geomean_ratio", {})[f"{dtype}-{layout}"] = g
                print(f"geomean ratio (cuBLAS time / Argus time) {dtype} {layout}: {g}")
        if drawn:
            out["geomean_by_family"] = family_geomeans(out["timing"], drawn)
            print(f"geomean ratio by family: {out['geomean_by_family']}")
    kind = "all" if both else ("correctness" if args.correctness else "timing")
    os.makedirs(RESULTS_DIR, exist_ok=True)
    path = os.path.join(RESULTS_DIR, f"gemm-{kind}-{now.strftime('%Y%m%d-%H%M%S')}.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=2, default=str)
    print(f"wrote {path}; {failed} case(s) not ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
