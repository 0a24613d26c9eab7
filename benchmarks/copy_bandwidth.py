"""Bandwidth of the DSL's plain register path (the `blocked` layout's loads and stores), on
an sm_90 GPU: a copy and an elementwise y = silu(x) * 2 written in the DSL, compiled by
Argus, checked against torch on fresh random inputs with NaN-poisoned outputs, then timed
in the same run against torch's kernels for the same work (y.copy_(x); for the
elementwise one, torch's eager silu then mul, i.e. two kernels: the peer a user without a
fused kernel has). A row pitch that is not a multiple of 8 takes the element-by-element
fallback (no vector access), so the table shows what the vector accesses buy.

    python benchmarks/copy_bandwidth.py [--out benchmarks/results/copy-bandwidth-DATE.json]

Writes one row per (kernel, dtype, shape): GB/s of both, and ratio = torch time / Argus time.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KERNEL = """from argus.lang import *  # noqa: F401,F403

@kernel(grid=("(M + {bm} - 1) // {bm}", "(N + {bn} - 1) // {bn}"), block=128)
def {name}(X: Tensor["M", "N", {dtype}], Y: Tensor["M", "N", {dtype}]):
    x = load(tile(X, ({bm}, {bn}), (block_id("x"), block_id("y"))), "blocked")
    store(tile(Y, ({bm}, {bn}), (block_id("x"), block_id("y"))), {expr})
"""
KINDS = {"copy": "x", "silu2": "silu(x) * 2.0"}      # computed in fp32 registers
SHAPES = [(8192, 8192), (4096, 16384), (16384, 4096), (2048, 2048),
          (8192, 8188), (8192, 8190), (8192, 8191)]   # pitch: 16-, 8-/4-byte aligned, odd
BOXES = [(64, 128), (32, 128), (64, 256)]


def access_bytes(n: int, itemsize: int) -> int:
    """The widest access the generated code takes for rows of n elements (1 element when
    the pitch is odd): what indexed.py's run-time checks pick."""
    e = 16 // itemsize
    while e > 1 and n % e:
        e //= 2
    return e * itemsize


def build(kind: str, dtype: str, box):
    from argus.codegen import generate
    from argus.frontend.parse import parse_source
    from argus.runtime import BuildOptions, build_kernel
    from argus.runtime.launch import Launcher

    expr = KINDS[kind]
    if kind != "copy" and dtype != "fp32":
        expr = f"cast({expr}, {dtype})"
    src = KERNEL.format(name=kind, dtype=dtype, expr=expr, bm=box[0], bn=box[1])
    kernel = parse_source(src, f"<{kind}_{dtype}>")[kind]
    gen = generate(kernel)
    entry = build_kernel(gen.source, BuildOptions())
    return Launcher(gen, entry.cubin, kernel)


def main(argv=None) -> int:
    import torch

    from argus.bench.stats import summarize
    from argus.bench.timing import EventClock, TimingConfig, alternate_rounds

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" /
                                        f"copy-bandwidth-{datetime.date.today():%Y%m%d}.json"))
    args = p.parse_args(argv)
    clock = EventClock()
    config = TimingConfig(warmup=5, reps=60, rounds=6, graphs="never")
    rows = []
    torch_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}
    for kind, dtype, box in [(k, d, b) for k in KINDS for d in ("fp32", "bf16")
                             for b in (BOXES if k == "copy" else BOXES[:1])]:
        launch = build(kind, dtype, box)
        for m, n in SHAPES if box == BOXES[0] else SHAPES[:1]:
            x = torch.randn(m, n, device="cuda").to(torch_dtype[dtype])
            y = torch.full_like(x, float("nan"))
            launch(x, y)
            torch.cuda.synchronize()
            if kind == "copy":
                want = x.clone()
                peer = lambda: y_peer.copy_(x)          # noqa: E731
            else:
                want = (torch.nn.functional.silu(x.double()) * 2).to(x.dtype)
                peer = lambda: torch.mul(torch.nn.functional.silu(x), 2.0, out=y_peer)  # noqa: E731
            y_peer = torch.empty_like(x)
            err = (y.double() - want.double()).abs().max().item()
            tol = 0.0 if kind == "copy" else (1e-5 if dtype == "fp32" else 1e-2)
            ok = bool(torch.isfinite(y).all()) and err <= tol * max(1.0, want.abs().max().item())
            samples = alternate_rounds({"argus": lambda: launch(x, y), "torch": peer},
                                       clock, config)
            a, t = summarize(samples["argus"]), summarize(samples["torch"])
            nbytes = 2 * x.numel() * x.element_size()
            row = {"kernel": kind, "dtype": dtype, "box": list(box), "M": m, "N": n,
                   "correct": ok, "max_abs_error": err,
                   "access_bytes": access_bytes(n, x.element_size()),
                   "argus_ms": a["median_ms"], "torch_ms": t["median_ms"],
                   "argus_GBps": nbytes / a["median_ms"] / 1e6,
                   "torch_GBps": nbytes / t["median_ms"] / 1e6,
                   "ratio_torch_over_argus": t["median_ms"] / a["median_ms"]}
            rows.append(row)
            print(f"{kind:6} {dtype:5} box {box[0]:3}x{box[1]:<3} {m:6}x{n:<6} "
                  f"{'ok ' if ok else 'BAD'} argus {row['argus_GBps']:6.0f} GB/s  torch "
                  f"{row['torch_GBps']:6.0f} GB/s  ratio {row['ratio_torch_over_argus']:.3f}"
                  f"  ({row['access_bytes']}-byte accesses)")
    out = {"device": torch.cuda.get_device_name(), "date": f"{datetime.date.today()}",
           "command": "python benchmarks/copy_bandwidth.py", "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
