"""Device A/B (eighteenth session): the MoE router's moe_topk in several specialisations, and
the decode down GEMM's tile width, each phase in one call.

    python3 scripts/device_moe_topk.py topk  --out DIR   # moe_topk alone, per (T, E, k, variant)
    python3 scripts/device_moe_topk.py down  --out DIR   # decode layer: down BN 128 vs 256

topk: each variant (`BT=n`: argus/kernels/moe_route.py with that many tokens per block;
`acc`: argus/kernels/moe_route_acc.py if present, the accumulator-layout form) is checked
against the fp64 routing (experts exactly, gates to 1e-5) on random logits and on rounded
ones (ties), then timed two ways: back-to-back launches on the stream (what the layer pays,
launch included; the breakdown's method) and the replay of a CUDA graph of 20 launches (the
kernel's device time). down: the whole decode layer with the default configuration and with
the down GEMM's n-tiles 256 wide (S 5), alternated three times per shape.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys

sys.path.insert(0, os.getcwd())

TOPK_SHAPES = [(1, 8, 2), (16, 8, 2), (4096, 8, 2), (1, 64, 6), (16, 64, 6), (64, 64, 6),
               (4096, 64, 6), (1, 128, 8), (8192, 128, 8)]
BTS = (1, 2, 4, 8, 16, 32)


def valid_bt(bt, e):
    """The blocked (BT, E) layout spreads over all 128 threads only when 128 | BT * E."""
    return (bt * e) % 128 == 0


def reference(L, k):
    from argus.ops.library import KERNEL_DIR
    spec = importlib.util.spec_from_file_location("route_ref", KERNEL_DIR / "moe_route.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _, experts, gates, *_ = mod.reference(L, k, True)
    return experts, gates


def events_ms(torch, fn, reps=50, rounds=5):
    out = []
    for _ in range(rounds):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(reps):
            fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / reps)
    return statistics.median(out)


def graph_ms(torch, fn, n=20, rounds=5):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            fn()
    g.replay()
    torch.cuda.synchronize()
    return events_ms(torch, g.replay, reps=10, rounds=rounds) / n


def topk(torch, out):
    import numpy as np

    from argus.ops.library import KERNEL_DIR, library_kernel
    variants = [("BT", bt) for bt in BTS]
    if (KERNEL_DIR / "moe_route_acc.py").exists():
        variants.append(("acc", None))
    from argus.bench.moe_bench import prebuild
    specs = [("moe_route" if kind == "BT" else "moe_route_acc", "moe_topk",
              {"E": e, "TOPK": k, "RENORM": 1, **({"BT": bt} if bt else {})})
             for _, e, k in dict.fromkeys((0, e, k) for _, e, k in TOPK_SHAPES)
             for kind, bt in variants if kind != "BT" or valid_bt(bt, e)]
    print("\n".join(line for line in prebuild(specs) if line.startswith("FAILED")))
    rows = []
    for t, e, k in TOPK_SHAPES:
        L = torch.randn(t, e, device="cuda")
        Lties = torch.round(torch.randn(t, e, device="cuda"))
        experts = torch.empty(t * k, dtype=torch.int32, device="cuda")
        gates = torch.empty(t * k, dtype=torch.float32, device="cuda")
        for kind, bt in variants:
            if kind == "BT" and not valid_bt(bt, e):
                continue
            label = f"BT={bt}" if kind == "BT" else "acc"
            row = {"T": t, "E": e, "k": k, "variant": label}
            try:
                ov = {"E": e, "TOPK": k, "RENORM": 1, **({"BT": bt} if bt else {})}
                fn = library_kernel("moe_route" if kind == "BT" else "moe_route_acc",
                                    "moe_topk", **ov)
                ok = True
                for logits in (L, Lties):
                    experts.fill_(-7)
                    gates.fill_(float("nan"))
                    fn(logits, experts, gates)
                    torch.cuda.synchronize()
                    want_e, want_g = reference(logits.cpu().numpy(), k)
                    ok &= bool(np.array_equal(experts.cpu().numpy(), want_e)
                               and np.allclose(gates.cpu().numpy(), want_g, rtol=1e-5,
                                               atol=1e-6))
                call = lambda: fn(L, experts, gates)
                row.update(ok=ok, stream_us=1e3 * events_ms(torch, call),
                           graph_us=1e3 * graph_ms(torch, call))
            except Exception as exc:
                row["error"] = f"{type(exc).__name__}: {exc}"[:400]
            rows.append(row)
            print(json.dumps(row), flush=True)
    with open(os.path.join(out, "moe-topk-ab.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)
    print("\n T     E   k  variant  ok   stream_us graph_us")
    for r in rows:
        print(f"{r['T']:5d} {r['E']:4d} {r['k']:2d}  {r['variant']:7s} {str(r.get('ok')):5s}"
              f" {r.get('stream_us', float('nan')):8.1f} {r.get('graph_us', float('nan')):8.1f}"
              f" {r.get('error', '')[:60]}")


def down(torch, out):
    import importlib

    from argus.bench.moe_bench import SHAPES, make_inputs, time_ms
    op = importlib.import_module("argus.ops.moe")
    original = op.config_for
    shapes = {"decode-finegrained-16": SHAPES["decode-finegrained-16"],
              "decode-finegrained-64": SHAPES["decode-finegrained-64"],
              "decode-finegrained-8": (8, 64, 6, 2048, 1408),
              "decode-finegrained-32": (32, 64, 6, 2048, 1408),
              "decode-mixtral-64": SHAPES["decode-mixtral-64"],
              "decode-small-experts-16": (16, 128, 8, 2048, 768)}
    rows = []
    try:
        for name, (t, e, k, h, i) in shapes.items():
            base = original(t, e, h, i, k)
            wide = {"gate_up": base["gate_up"], "down": {**base["down"], "BN": 256, "S": 5}}
            x, L, w13, w2 = make_inputs(torch, t, e, k, h, i, "random", 3, "cuda")
            ms = {"default": [], "down BN256 S5": []}
            for _ in range(3):
                for label, cfg in (("default", base), ("down BN256 S5", wide)):
                    op.config_for = lambda *a, c=cfg: c
                    ms[label].append(time_ms(torch, {"a": lambda: op.moe(x, L, w13, w2, k)},
                                             rounds=5)["a"])
            row = {"shape": name, "T": t, "E": e, "k": k, "ms": ms,
                   "ratio_wide_over_default": statistics.median(ms["default"])
                   / statistics.median(ms["down BN256 S5"])}
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        op.config_for = original
    with open(os.path.join(out, "moe-down-ab.json"), "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("phase", choices=("topk", "down"))
    p.add_argument("--out", default="out")
    args = p.parse_args()
    import torch
    os.makedirs(args.out, exist_ok=True)
    {"topk": topk, "down": down}[args.phase](torch, args.out)


if __name__ == "__main__":
    main()
