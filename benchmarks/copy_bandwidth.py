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

@kernel(grid=("(M + 63) // 64", "(N + 127) // 128"), block=128)
def {name}(X: Tensor["M", "N", {dtype}], Y: Tensor["M", "N", {dtype}]):
    x = load(tile(X, (64, 128), (block_id("x"), block_id("y"))), "blocked")
    store(tile(Y, (64, 128), (block_id("x"), block_id("y"))), {expr})
"""
KINDS = {"copy": "x", "silu2": "silu(x) * 2.0"}      # computed in fp32 registers
SHAPES = [(8192, 8192), (4096, 16384), (16384, 4096), (8192, 8188), (2048, 2048)]


def build(kind: str, dtype: str):
    from argus.codegen import generate
    from argus.frontend.parse import parse_source
    from argus.runtime import BuildOptions, build_kernel
    from argus.runtime.launch import Launcher

    expr = KINDS[kind]
    if kind != "copy" and dtype != "fp32":
        expr = f"cast({expr}, {dtype})"
    src = KERNEL.format(name=kind, dtype=dtype, expr=expr)
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
    for kind in KINDS:
        for dtype in ("fp32", "bf16"):
            launch = build(kind, dtype)
            for m, n in SHAPES:
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
                row = {"kernel": kind, "dtype": dtype, "M": m, "N": n, "correct": ok,
                       "max_abs_error": err, "vector_path": n % 8 == 0,
                       "argus_ms": a["median_ms"], "torch_ms": t["median_ms"],
                       "argus_GBps": nbytes / a["median_ms"] / 1e6,
                       "torch_GBps": nbytes / t["median_ms"] / 1e6,
                       "ratio_torch_over_argus": t["median_ms"] / a["median_ms"]}
                rows.append(row)
                print(f"{kind:6} {dtype:5} {m:6}x{n:<6} {'ok ' if ok else 'BAD'} "
                      f"argus {row['argus_GBps']:7.0f} GB/s  torch {row['torch_GBps']:7.0f} GB/s"
                      f"  ratio {row['ratio_torch_over_argus']:.3f}"
                      f"{'' if row['vector_path'] else '  (pitch % 8 != 0: element path)'}")
    out = {"device": torch.cuda.get_device_name(), "date": f"{datetime.date.today()}",
           "command": "python benchmarks/copy_bandwidth.py", "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
