"""Issue 17, decode: what sets a decode MoE GEMM's time, each kernel alone on synthetic routings
(the thirtieth session's question: fixed cost per block, the O(E) expert walk, the per-SM
streaming rate, or the share of SMs with work).

Each variant launches moe_down or moe_gate_up of the library (argus.ops.library) on a routing
of `hits` experts with `rows` slots each, spread over E experts, outputs poisoned with NaN
first, checked against float64 torch, and timed by torch.profiler's device timestamps (the
kernel alone, no launch gaps). A variant differs from the fine-grained T = 1 layer's GEMM
(E = 64, six experts hit, one slot each) in one thing:

  E8         the same hits among 8 experts: the cost of walking 64 experts
  hits1      one expert hit: its items on 1/6 of the SMs (the per-SM streaming rate)
  hits0      no expert hit: launch, prologue and walk only (the fixed cost)
  Khalf      half the k-steps: the per-step slope
  BN64, S*   the tile width and the ring depth

    python3 scripts/device_moe_gemm_probe.py [--only a,b] [--out DIR]
Writes DIR/moe-gemm-probe-<date>.json.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# fine-grained layer: H = 2048, I = 1408
DOWN = {"kernel": "down", "E": 64, "hits": 6, "rows": 1, "N": 2048, "K": 1408,
        "cfg": {"BN": 128, "S": 8, "ORDER": "n_major", "WG": 1, "CONSUMERS": (1,),
                "SKIP_EMPTY": 1}}
GATE_UP = {"kernel": "gate_up", "E": 64, "hits": 6, "rows": 1, "N": 1408, "K": 2048,
           "cfg": {"BN": 128, "S": 5, "ORDER": "n_major", "GATHER": "warpgroup", "WG": 1,
                   "CONSUMERS": (1,), "SKIP_EMPTY": 1}}


def variant(base, **over):
    cfg = dict(base["cfg"], **over.pop("cfg", {}))
    return dict(base, cfg=cfg, **over)


VARIANTS = {
    "down": DOWN,
    "down E8": variant(DOWN, E=8),
    "down hits1": variant(DOWN, hits=1),
    "down hits0": variant(DOWN, hits=0),
    "down Khalf": variant(DOWN, K=704),
    "down BN64": variant(DOWN, cfg={"BN": 64}),
    "down S4": variant(DOWN, cfg={"S": 4}),
    "down S2": variant(DOWN, cfg={"S": 2}),
    "down rows16": variant(DOWN, rows=16),
    "gate_up": GATE_UP,
    "gate_up E8": variant(GATE_UP, E=8),
    "gate_up hits1": variant(GATE_UP, hits=1),
    "gate_up hits0": variant(GATE_UP, hits=0),
    "gate_up Khalf": variant(GATE_UP, K=1024),
    "gate_up BN64": variant(GATE_UP, cfg={"BN": 64}),
    "gate_up BN64 S8": variant(GATE_UP, cfg={"BN": 64, "S": 8}),
    "gate_up S3": variant(GATE_UP, cfg={"S": 3}),
}


def counts_of(np, e, hits, rows):
    """`hits` experts spread over e (every e // hits-th), `rows` slots each."""
    counts = np.zeros(e, np.int32)
    if hits:
        counts[np.linspace(0, e - 1, hits).round().astype(int)] = rows
    return counts


def setup(torch, np, v):
    """(launch, check, specs) of a variant: the launcher's no-argument call, a function that
    checks the output against float64, and the kernel spec to prebuild."""
    from argus.ops.library import library_kernel

    e, n, k = v["E"], v["N"], v["K"]
    counts = counts_of(np, e, v["hits"], v["rows"])
    p = max(int(counts.sum()), 1)
    g = torch.Generator(device="cuda").manual_seed(5)
    dt = torch.bfloat16
    c = torch.tensor(counts, device="cuda")
    offs = np.concatenate([[0], np.cumsum(counts)])
    if v["kernel"] == "down":
        x = (torch.randn(p, k, device="cuda", generator=g) * 0.5).to(dt)
        w = (torch.randn(e * n, k, device="cuda", generator=g) * k ** -0.5).to(dt)
        ws = torch.rand(p, device="cuda", generator=g)
        y = torch.empty((p, n), dtype=dt, device="cuda")
        launch = library_kernel("moe_down", "moe_down", E=e, DT="bf16", **v["cfg"])

        def run():
            launch(x, w, c, ws, y)

        def want(ex, lo, hi):
            return ws[lo:hi, None].double() * (x[lo:hi].double()
                                               @ w[ex * n:(ex + 1) * n].double().T)
        out = y
    else:
        t = 4
        x = (torch.randn(t, k, device="cuda", generator=g) * 0.5).to(dt)
        w1 = (torch.randn(e * n, k, device="cuda", generator=g) * k ** -0.5).to(dt)
        w3 = (torch.randn(e * n, k, device="cuda", generator=g) * k ** -0.5).to(dt)
        ids = torch.randint(0, t, (p,), device="cuda", generator=g, dtype=torch.int32)
        h = torch.empty((p, n), dtype=dt, device="cuda")
        launch = library_kernel("moe_gate_up", "moe_gate_up", E=e, DT="bf16", **v["cfg"])

        def run():
            launch(x, w1, w3, ids, c, h)

        def want(ex, lo, hi):
            rows = x[ids[lo:hi].long()].double()
            gt = rows @ w1[ex * n:(ex + 1) * n].double().T
            up = rows @ w3[ex * n:(ex + 1) * n].double().T
            return gt * torch.sigmoid(gt) * up
        out = h

    def check():
        out.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        worst = 0.0
        for ex in range(e):
            lo, hi = int(offs[ex]), int(offs[ex + 1])
            if hi == lo:
                continue
            got = out[lo:hi].double()
            if not bool(torch.isfinite(got).all()):
                return False, float("nan")
            ref = want(ex, lo, hi)
            worst = max(worst, float((got - ref).abs().max() / ref.abs().max()))
        return worst < 2e-2, worst
    weight_bytes = int((counts > 0).sum()) * n * k * 2 * (1 if v["kernel"] == "down" else 2)
    return run, check, weight_bytes


def main() -> int:
    import numpy as np
    import torch

    from argus.bench.moe_bench import copy_bandwidth, kernel_gpu_us, prebuild

    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="out")
    args = ap.parse_args()
    names = [n for n in VARIANTS if not args.only or n in args.only.split(",")]
    specs = {}
    for name in names:
        v = VARIANTS[name]
        module = "moe_down" if v["kernel"] == "down" else "moe_gate_up"
        over = {"E": v["E"], "DT": "bf16", **v["cfg"]}
        specs[(module, tuple(sorted(over.items())))] = (module, module, over)
    for line in prebuild(list(specs.values())):
        print(line, flush=True)
    copy_bw = copy_bandwidth(torch)
    rows = []
    for name in names:
        v = VARIANTS[name]
        row = {"variant": name, "kernel": v["kernel"], "E": v["E"], "hits": v["hits"],
               "rows": v["rows"], "N": v["N"], "K": v["K"],
               "cfg": {a: b for a, b in v["cfg"].items() if a != "CONSUMERS"}}
        try:
            run, check, nbytes = setup(torch, np, v)
            ok, err = check()
            us = kernel_gpu_us(torch, run, calls=20)
            kern = max(us.values()) if us else float("nan")
            row.update(ok=ok, rel_error=err, us=round(kern, 2), weight_bytes=nbytes,
                       bw_ratio=(nbytes / (kern * 1e-6) / copy_bw) if nbytes else None)
        except Exception as exc:        # one variant's failure must not lose the others
            row["error"] = f"{type(exc).__name__}: {exc}"[:400]
        rows.append(row)
        print(json.dumps(row), flush=True)
    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.date.today().strftime("%Y%m%d")
    path = os.path.join(args.out, f"moe-gemm-probe-{stamp}.json")
    with open(path, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "copy_bytes_per_s": copy_bw,
                   "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                   "rows": rows}, f, indent=1)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
