"""Issue 17 on the H200: why the fine-grained (E = 64) layer's down GEMM never ends. Two parts,
each run in a child process with a timeout so one hang cannot take the call:

  layer   the finegrained-tails layer launch by launch (debug builds: a stuck mbarrier wait
          traps naming the barrier, block and thread), each intermediate checked against torch
          (counts against a bincount of the chosen experts, ids/slots a permutation, wsorted the
          gates in slot order, H and Yd against float64 on a sample of slots)
  down    the down kernel alone on synthetic routings, one configuration a child: expert
          counts with and without empty experts, E = 8 .. 64, ring depth, tile width, blocks

    python scripts/device_moe_down_probe.py [--part layer|down|all] [--out FILE.json]
"""
import argparse
import json
import os
import subprocess
import sys
import time

DEVICE = os.environ.get("PROBE_DEVICE", "cuda")   # "cpu" with ARGUS_INTERPRET=1: a dry run
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# (name, E, rows P, K, N, routing, overrides): the finegrained-tails down GEMM is P = 517*6,
# K = I = 384, N = H = 256
DOWN_VARIANTS = [
    ("e64-zeros", 64, 3102, 384, 256, "zeros", {}),
    ("e64-full", 64, 3102, 384, 256, "full", {}),
    ("e8-full", 8, 3102, 384, 256, "full", {}),
    ("e16-zeros", 16, 3102, 384, 256, "zeros", {}),
    ("e32-zeros", 32, 3102, 384, 256, "zeros", {}),
    ("e64-zeros-s4", 64, 3102, 384, 256, "zeros", {"S": 4}),
    ("e64-zeros-bn64", 64, 3102, 384, 256, "zeros", {"BN": 64, "S": 8}),
    ("e64-zeros-mmajor", 64, 3102, 384, 256, "zeros", {"ORDER": "m_major"}),
    ("e64-zeros-blocks16", 64, 3102, 384, 256, "zeros", {"BLOCKS": 16}),
    ("e64-big", 64, 24576, 1408, 2048, "zeros", {}),
    ("e48-full", 48, 3102, 384, 256, "full", {}),
    ("e40-full", 40, 3102, 384, 256, "full", {}),
    ("e64-full-blocks128", 64, 3102, 384, 256, "full", {"BLOCKS": 128}),
    ("e64-full-blocks66", 64, 3102, 384, 256, "full", {"BLOCKS": 66}),
    ("e64-full-blocks32", 64, 3102, 384, 256, "full", {"BLOCKS": 32}),
    ("e32-full-blocks16", 32, 3102, 384, 256, "full", {"BLOCKS": 16}),
]


def counts_for(np, rng, e, p, routing):
    """Expert counts adding up to p: "full" every expert gets rows, "zeros" a quarter none."""
    weights = rng.random(e) + 0.2
    if routing == "zeros":
        weights[rng.permutation(e)[:e // 4]] = 0.0
    raw = np.floor(weights / weights.sum() * p).astype(np.int64)
    raw[int(np.argmax(weights))] += p - int(raw.sum())
    return raw


def run_down(torch, name, e, p, k, n, routing, overrides):
    import numpy as np

    from argus.ops.library import library_kernel

    rng = np.random.default_rng(7)
    dev = DEVICE
    counts = counts_for(np, rng, e, p, routing)
    x = (torch.randn(p, k, device=dev) * 0.5).to(torch.bfloat16)
    w = (torch.randn(e * n, k, device=dev) * k ** -0.5).to(torch.bfloat16)
    ws = torch.rand(p, device=dev)
    y = torch.full((p, n), float("nan"), dtype=torch.bfloat16, device=dev)
    cfg = dict({"BN": 128, "S": 6, "ORDER": "n_major"}, **overrides)
    launch = library_kernel("moe_down", "moe_down", E=e, DT="bf16", **cfg)
    c = torch.tensor(counts, dtype=torch.int32, device=dev)
    torch.cuda.synchronize()
    t0 = time.time()
    launch(x, w, c, ws, y)
    torch.cuda.synchronize()
    seconds = time.time() - t0
    offs = np.concatenate([[0], np.cumsum(counts)])
    worst = 0.0
    for ex in range(e):
        lo, hi = int(offs[ex]), int(offs[ex + 1])
        if hi == lo:
            continue
        ref = ws[lo:hi, None].double() * (x[lo:hi].double() @ w[ex * n:(ex + 1) * n].double().T)
        got = y[lo:hi].double()
        if not bool(torch.isfinite(got).all()):
            return {"name": name, "ok": False, "why": f"non-finite rows of expert {ex}",
                    "seconds": seconds}
        worst = max(worst, float((got - ref).abs().max() / (ref.abs().max() + 1e-6)))
    return {"name": name, "ok": worst < 2e-2, "rel_err": worst, "seconds": seconds,
            "counts_min": int(counts.min()), "zero_experts": int((counts == 0).sum())}


def run_layer(torch):
    """finegrained-tails launch by launch, each intermediate checked."""
    from argus.bench import moe_bench as mb
    from argus.ops.moe import launches

    _, t, e, k, h, i, logits = next(c for c in mb.CORRECTNESS if c[0] == "finegrained-tails")
    x, L, w13, w2 = mb.make_inputs(torch, t, e, k, h, i, logits, 5, DEVICE)
    bufs = {}
    out, steps = launches(x, L, w13, w2, k, buffers=bufs)
    report = {}
    for name, step in steps:
        print(f"layer: launching {name}", flush=True)
        t1 = time.time()
        step()
        torch.cuda.synchronize()
        report[name] = {"seconds": round(time.time() - t1, 4)}
        print(f"layer: {name} done in {time.time() - t1:.3f} s", flush=True)
        if name == "topk":
            order = torch.sort(-L, dim=1, stable=True).indices[:, :k]      # (T, k)
            same = bool(torch.equal(bufs["experts"].view(k, t).T.long(), order))  # j-major
            report[name]["experts_match_torch"] = same
        if name == "count" or (name == "place" and not any(n == "count" for n, _ in steps)):
            want = torch.bincount(bufs["experts"].long(), minlength=e)
            got = bufs["counts"].long()
            report[name].update(match=bool(torch.equal(want, got)), sum=int(got.sum()),
                                min=int(got.min()), max=int(got.max()), p=t * k)
        if name == "place":
            p = t * k
            ids = bufs["ids"].long()
            slots = bufs["slots"].long()
            report[name].update(
                ids_in_range=bool(((ids >= 0) & (ids < t)).all()),
                slots_perm=bool(torch.equal(torch.sort(slots).values,
                                            torch.arange(p, device=slots.device))),
                sorted_by_expert=bool((bufs["experts"].long()[torch.argsort(slots)]
                                       .diff() >= 0).all()))
        print(json.dumps({name: report[name]}), flush=True)
    from argus.ops.moe import reference
    sample = torch.arange(0, t, 7, device=x.device)
    ok, err, scale = mb.compare(torch, out, reference(x[sample], L[sample], w13, w2, k, True),
                                sample)
    report["layer"] = {"ok": ok, "max_abs_err": err, "max_abs_ref": scale}
    return report


def child(part, index):
    import torch

    if DEVICE != "cuda":
        torch.cuda.synchronize = lambda: None

    if part == "layer":
        return run_layer(torch)
    return run_down(torch, *DOWN_VARIANTS[index])


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--part", default="all")
    p.add_argument("--out", default="moe-down-probe.json")
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--child", nargs=2, default=None)
    p.add_argument("--only", default="", help="comma-separated variant names")
    args = p.parse_args()
    if args.child:
        print("RESULT " + json.dumps(child(args.child[0], int(args.child[1]))), flush=True)
        return 0
    jobs = []
    if args.part in ("layer", "all"):
        jobs.append(("layer", 0, "layer"))
    if args.part in ("down", "all"):
        jobs += [("down", j, v[0]) for j, v in enumerate(DOWN_VARIANTS)
                 if not args.only or v[0] in args.only.split(",")]
    results = []
    for part, index, label in jobs:
        t0 = time.time()
        try:
            proc = subprocess.run([sys.executable, __file__, "--child", part, str(index)],
                                  capture_output=True, text=True, timeout=args.timeout)
            out = proc.stdout + proc.stderr
            found = [line[7:] for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
            row = {"job": label, "rc": proc.returncode,
                   "result": json.loads(found[0]) if found else None,
                   "tail": out[-1500:] if not found or proc.returncode else ""}
        except subprocess.TimeoutExpired as err:
            out = (err.stdout or b"").decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
            row = {"job": label, "rc": "timeout", "result": None, "tail": out[-1500:]}
        row["seconds"] = round(time.time() - t0, 1)
        results.append(row)
        print(json.dumps(row)[:2000], flush=True)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
