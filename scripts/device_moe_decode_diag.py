"""Where a decode MoE layer's time goes (issue 17's T = 1 rows), on the GPU, in one call:
for each (shape, variant) the layer timed as the benchmark times it (events around five
eager calls), the host's time to enqueue one call (no sync), the layer replayed as a CUDA
graph (the GPU's time alone, the gaps between its launches included) and each kernel's
GPU duration from torch.profiler. Variants override config_for's knobs per GEMM.

    python3 scripts/device_moe_decode_diag.py [--shapes a,b] [--out DIR]
Writes DIR/moe-decode-diag-<date>.json. Run through the device tool (scripts/device_env.sh).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

VARIANTS = {
    "default": {},
    # the 128-wide tiles config_for took before decode_tile_width (thirtieth session)
    # argus.ops.moe.decode_tile_width's choice (DECODE_TILE_RULE, off by default)
    "tile rule": {"tile_rule": True},
    # the rule's gate-up (64 wide at fine-grained T = 1) with the 128-wide down: what the
    # down's 96-wide tiles add
    "tile rule dn128": {"tile_rule": True, "down": {"BN": 128, "S": 8}},
    "gu BN128": {"gate_up": {"BN": 128, "S": 5}},
    "dn BN128": {"down": {"BN": 128, "S": 8}},
    "gate_up BN64": {"gate_up": {"BN": 64}},
    "down BN64": {"down": {"BN": 64}},
    "both BN64": {"gate_up": {"BN": 64}, "down": {"BN": 64}},
    # deeper rings: the bytes in flight over the GPU (Little's law), not the tile width,
    # set a decode GEMM's rate (the s28 ncu: 40-48% of DRAM throughput at fine-grained T=1)
    "gu BN64 S9": {"gate_up": {"BN": 64, "S": 9}},
    "dn BN64 S14": {"down": {"BN": 64, "S": 14}},
    "dn BN128 S9": {"down": {"S": 9}},
    "gu BN64 S9 + dn BN64 S14": {"gate_up": {"BN": 64, "S": 9}, "down": {"BN": 64, "S": 14}},
    "gu BN64 S9 + dn BN128 S9": {"gate_up": {"BN": 64, "S": 9}, "down": {"S": 9}},
    # shallower rings and the one-thread gather: if a k-step's time does not move with the
    # ring's depth, the steps are serialised by something other than the bytes in flight
    "gu S2 + dn S2": {"gate_up": {"S": 2}, "down": {"S": 2}},
    "gu tma": {"gate_up": {"GATHER": "tma"}},
    # the router's count and place in 1024-entry tiles, as before the twenty-ninth session
    "route BS1024": {"route_bs": 1024},
    # the router in three launches (moe_count, then moe_place), as before the thirty-first
    # session's placement that counts the entries itself (ROUTE_COUNT_HERE)
    "count kernel": {"count_kernel": True},
    # the launches before the combine replayed as one CUDA graph once the inputs' addresses
    # repeat (argus.ops.moe.DECODE_GRAPHS, argus/ops/moe_graphs.py)
    "graphs": {"graphs": True},
}


def main() -> int:
    import importlib

    import torch

    from argus.bench.graphs import capture
    from argus.bench.moe_bench import (SHAPES, copy_bandwidth, enqueue_us, expert_bytes_read,
                                       kernel_gpu_us, make_inputs, prebuild, time_ms)

    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="decode-finegrained-1,decode-mixtral-1,"
                                        "decode-finegrained-16")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--extra", default="",
                    help="more shapes, NAME=T:E:k:H:I[,...] (e.g. the fine-grained bytes at "
                         "another expert count)")
    ap.add_argument("--out", default="out")
    args = ap.parse_args()
    op = importlib.import_module("argus.ops.moe")
    original = op.config_for
    original_bs = op.route_block_entries
    original_here = op.ROUTE_COUNT_HERE
    original_graphs = op.DECODE_GRAPHS

    def route_tiles(variant):
        """The router of `variant` in place (its route_bs and count_kernel, else the op's
        own)."""
        bs = VARIANTS[variant].get("route_bs") if variant else None
        op.route_block_entries = (lambda n: bs) if bs else original_bs
        op.ROUTE_COUNT_HERE = original_here and not (
            variant and VARIANTS[variant].get("count_kernel"))
        op.DECODE_GRAPHS = original_graphs or bool(
            variant and VARIANTS[variant].get("graphs"))
    for item in filter(None, args.extra.split(",")):
        name, dims = item.split("=")
        SHAPES[name] = tuple(int(v) for v in dims.split(":"))
    shapes = args.shapes.split(",") + [item.split("=")[0]
                                      for item in filter(None, args.extra.split(","))]
    variants = args.variants.split(",")

    def cfg_of(name, variant):
        t, e, k, h, i = SHAPES[name]
        op.DECODE_TILE_RULE = bool(VARIANTS[variant].get("tile_rule"))
        base = original(t, e, h, i, k)
        op.DECODE_TILE_RULE = False
        over = VARIANTS[variant]
        return {part: {**base[part], **over.get(part, {})} for part in ("gate_up", "down")}

    specs = {}
    for name in shapes:
        t, e, k, h, i = SHAPES[name]
        for variant in variants:
            route_tiles(variant)
            for spec in op.kernels_for(t, e, h, i, k, True, True, "bf16",
                                       cfg_of(name, variant)).values():
                specs[(spec[0], spec[1], tuple(sorted(spec[2].items())))] = spec
            route_tiles(None)
    for line in prebuild(list(specs.values())):
        print(line, flush=True)
    copy_bw = copy_bandwidth(torch)
    rows = []
    for name in shapes:
        t, e, k, h, i = SHAPES[name]
        x, L, w13, w2 = make_inputs(torch, t, e, k, h, i, "random", 11, "cuda")
        hit, nbytes = expert_bytes_read(torch, L, k, h, i)
        ref = None
        for variant in variants:
            cfg = cfg_of(name, variant)
            op.config_for = lambda *a, c=cfg: c
            route_tiles(variant)
            row = {"shape": name, "variant": variant, "config": cfg, "experts_hit": hit,
                   "weight_bytes": nbytes}
            try:
                call = lambda: op.moe(x, L, w13, w2, k)      # noqa: E731
                out = call()
                torch.cuda.synchronize()
                if ref is None:
                    ref = op.reference(x, L, w13, w2, k)
                err = float((out.double() - ref).abs().max() / ref.abs().max())
                row["rel_error"] = err
                row["finite"] = bool(torch.isfinite(out).all())
                # three more calls on x refilled in place (the graphs variant captures on
                # the second and replays on the third): the last against its own reference
                x0 = x.clone()
                for _ in range(3):
                    x.copy_(torch.randn_like(x))
                    again = call()
                torch.cuda.synchronize()
                ref2 = op.reference(x, L, w13, w2, k)
                row["rel_error_refilled"] = float((again.double() - ref2).abs().max()
                                                  / ref2.abs().max())
                row["finite_refilled"] = bool(torch.isfinite(again).all())
                x.copy_(x0)
                eager = time_ms(torch, {"a": call}, rounds=7)["a"]
                host = enqueue_us(torch, call)
                graph = capture(lambda ins, outs: call(), [((), ())])   # the GPU's time alone
                graph_ms = time_ms(torch, {"g": graph.replay}, rounds=7, reps=10)["g"]
                kernels = {n: round(v, 2) for n, v in kernel_gpu_us(torch, call).items()}
                row.update(eager_us=eager * 1e3, host_us=host,
                           graph_us=graph_ms * 1e3, kernels_us=kernels,
                           bw_ratio_eager=nbytes / (eager * 1e-3) / copy_bw,
                           bw_ratio_graph=nbytes / (graph_ms * 1e-3) / copy_bw)
            except Exception as exc:
                row["error"] = f"{type(exc).__name__}: {exc}"
            finally:
                op.config_for = original
                route_tiles(None)
            rows.append(row)
            print(json.dumps(row), flush=True)
    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.date.today().strftime("%Y%m%d")
    path = os.path.join(args.out, f"moe-decode-diag-{stamp}.json")
    with open(path, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "copy_bytes_per_s": copy_bw,
                   "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                   "rows": rows}, f, indent=1)
    print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
