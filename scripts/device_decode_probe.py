"""Where a decode GEMM's time goes (issue 18: M <= 64 at 0.85-0.90 of cuBLAS), on the GPU:
for each shape, argus.ops.matmul as the model configures it, the same call under other
knobs (narrow BN tiles that put more SMs to work, deeper rings, split-K), the split-K
kernel alone into a workspace already zeroed (what the workspace's zeroing and rounding
cost), and cuBLAS, all in one run; plus the weights' copy time (the bytes bound).

    python3 scripts/device_decode_probe.py --out $OUT/decode-probe.json

Every variant's output is compared with cuBLAS's first (poisoned, relative error 1e-2).
Timing: argus.bench.timing (L2 flushed, a GPU sleep before each call so host time stays
out), medians of alternating rounds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# shapes from the decode family that the judged seeds 7 and 29 did not draw exactly
SHAPES = [(6, 4096, 4096), (12, 6144, 4096), (24, 3072, 8192), (8, 4096, 11008),
          (48, 5120, 5120), (2, 14336, 4096), (32, 2048, 2048), (16, 8192, 3584)]
VARIANTS = [{}, {"BN": 32, "BM": 64}, {"BN": 16, "BM": 64}, {"BN": 64, "BM": 64, "stages": 14},
            {"BN": 64, "BM": 64, "BK": 128}, {"BN": 64, "BM": 64, "split_k": 2},
            {"BN": 128, "BM": 64, "split_k": 4}, {"BN": 32, "BM": 64, "split_k": 2}]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=240.0)
    ap.add_argument("--shapes", default=None, help="MxNxK,... instead of SHAPES")
    ap.add_argument("--variants", default=None, help="a JSON list of knob dicts instead of "
                    "VARIANTS ({} is the model's choice as matmul makes it, {\"as_given\": 1} "
                    "the same knobs on operands not copied onto the 128-byte grid)")
    args = ap.parse_args()
    shapes = [tuple(map(int, s.split("x"))) for s in args.shapes.split(",")] \
        if args.shapes else SHAPES
    variants = json.loads(args.variants) if args.variants else VARIANTS

    import torch

    import argus.ops
    from argus.bench.timing import EventClock, L2Flusher, TimingConfig, alternate_rounds
    from argus.ops.gemm_configs import shape_knobs
    from argus.ops.matmul import check_operands, plan

    from argus.ops.gemm_configs import shape_knobs
    from argus.ops.prebuild import prebuild, specialisation
    specs = []
    for m, n, k in shapes:
        for layout in ("nk", "kn"):
            for knobs in variants:
                try:
                    if knobs == {"as_given": 1}:
                        knobs = shape_knobs(m, n, k, layout)
                    specs.append(specialisation(layout, m, n, k, knobs))
                except Exception:        # refused variants are noted when called
                    pass
    prebuild(specs, log=lambda line: print(line, flush=True))
    clock, flush = EventClock(), L2Flusher()

    def before_each():
        flush()
        torch.cuda._sleep(100_000)

    cfg = TimingConfig(warmup=3, reps=24, rounds=3, graphs="never")
    gen = torch.Generator(device="cuda").manual_seed(3)
    rows, start = [], time.time()
    for m, n, k in shapes:
        for layout in ("nk", "kn"):
            if time.time() - start > args.budget_s:
                break
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
            stored = torch.randn((k, n) if layout == "kn" else (n, k), device="cuda",
                                 dtype=torch.bfloat16, generator=gen)
            b = stored if layout == "kn" else stored.t()
            want = torch.matmul(a, b).double()
            scale = max(1.0, want.abs().max().item())
            calls = {"cublas": (lambda peer=torch.empty(m, n, device="cuda",
                                                        dtype=torch.bfloat16):
                                torch.matmul(a, b, out=peer))}
            copy_dst = torch.empty_like(stored)
            calls["weights_copy"] = lambda: copy_dst.copy_(stored)
            notes = {}
            for knobs in variants:
                if knobs == {"as_given": 1}:    # the model's knobs, operands not repacked
                    knobs, name = dict(shape_knobs(m, n, k, layout)), "model, as given"
                else:
                    name = json.dumps(knobs, sort_keys=True) if knobs else "model"
                out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                try:
                    argus.ops.matmul(a, b, out=out, **knobs)
                    torch.cuda.synchronize()
                except Exception as exc:      # a variant the kernels refuse: noted
                    notes[name] = f"{type(exc).__name__}: {exc}"[:200]
                    continue
                err = (out.double() - want).abs().max().item() / scale
                if not err <= 1e-2:
                    notes[name] = f"wrong: relative error {err}"
                    continue
                calls[name] = (lambda out=out, knobs=knobs:
                               argus.ops.matmul(a, b, out=out, **knobs))
                used = knobs or shape_knobs(m, n, k, layout)
                if used.get("split_k", 1) > 1:
                    _, _, _, lay, b_stored = check_operands(a, b)
                    launcher, _ = plan(lay, m, n, k, "bf16", dict(used))
                    ws = torch.zeros(m, n, device="cuda", dtype=torch.float32)
                    calls[name + " kernel only"] = (lambda launcher=launcher, ws=ws,
                                                    b_stored=b_stored:
                                                    launcher(a, b_stored, ws))
            samples = alternate_rounds(calls, clock, cfg, before_each=before_each)
            med = {key: sorted(v)[len(v) // 2] * 1e3 for key, v in samples.items()}
            host, graph = {}, {}
            for key, fn in calls.items():
                if key == "weights_copy":
                    continue
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                for _ in range(200):
                    fn()
                host[key] = (time.perf_counter() - t0) / 200 * 1e6   # host-bound when > GPU
                torch.cuda.synchronize()
                try:     # the calls replayed from a CUDA graph: GPU time without host gaps
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g):
                        for _ in range(20):
                            fn()
                    g.replay()
                    torch.cuda.synchronize()
                    start_ev = torch.cuda.Event(enable_timing=True)
                    end_ev = torch.cuda.Event(enable_timing=True)
                    start_ev.record()
                    g.replay()
                    end_ev.record()
                    torch.cuda.synchronize()
                    graph[key] = start_ev.elapsed_time(end_ev) * 1e3 / 20
                except Exception as exc:
                    notes[key + " graph"] = f"{type(exc).__name__}: {exc}"[:120]
            row = {"m": m, "n": n, "k": k, "layout": layout, "us": med, "notes": notes,
                   "host_us_per_call": host, "graph_us_per_call_l2_warm": graph,
                   "model_knobs": shape_knobs(m, n, k, layout),
                   "ratio_model_to_cublas": med["cublas"] / med["model"]
                   if "model" in med else None,
                   "weights_gbps_cublas": 2 * n * k / (med["cublas"] * 1e3)}
            rows.append(row)
            best = min((v, key) for key, v in med.items()
                       if key not in ("cublas", "weights_copy") and "kernel only" not in key)
            print(f"{m}x{n}x{k} {layout}: cublas {med['cublas']:.1f} copy "
                  f"{med['weights_copy']:.1f} model {med.get('model', float('nan')):.1f} "
                  f"best {best[0]:.1f} {best[1]}", flush=True)
            for key, v in sorted(med.items(), key=lambda kv: kv[1]):
                print(f"    {v:8.1f} us  host {host.get(key, 0):6.1f}  graph "
                      f"{graph.get(key, 0):6.1f}  {key}", flush=True)
            for key, why in notes.items():
                print(f"    -- {key}: {why}", flush=True)
    Path(args.out).write_text(json.dumps({"device": torch.cuda.get_device_name(),
                                          "date": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                time.gmtime()),
                                          "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
