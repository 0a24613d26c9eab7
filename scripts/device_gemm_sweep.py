"""H200 sweep behind the GEMM's configuration model (argus/ops/gemm_model.py): every
configuration of the model's space, timed on shapes drawn at random (training seeds, not
the seed the benchmark judges), against cuBLAS in the same run, each output compared with
cuBLAS's first (poisoned output, relative error). The model's constants are fitted to
what this writes (tools/fit_gemm_model.py).

    python3 scripts/device_gemm_sweep.py --seeds 11,12 --count 40 --layouts kn,nk \
        --budget-s 330 --out $OUT/gemm-sweep.json

Phases: (1) list every (shape, layout, configuration); (2) build every distinct kernel
specialisation in a pool of processes (the disk cache, $ARGUS_CACHE_DIR, is shared);
(3) per shape: cuBLAS and each configuration, correctness then timing (argus.bench.timing:
L2 flushed before each call, then a GPU sleep that keeps the host's launch time out of the
measurement, alternating rounds). Stops timing at the budget and writes
what it has (every row says whether it was timed)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def specialisation(layout, m, n, k, knobs, dtype="bf16"):
    """(module, kernel name, constants) of one configuration, as argus.ops.matmul plans it."""
    from argus.ops.gemm_configs import knobs_to_config
    cfg = knobs_to_config(dict(knobs), layout, m, n, k)
    name = "gemm_nn" if layout == "kn" else "gemm_nt"
    if cfg.get("SPLIT"):
        cfg.pop("GROUP", None)
        return "gemm_splitk", name + "_splitk", dict(cfg, DT=dtype)
    return "gemm", name, dict(cfg, DT=dtype)


def _build(spec):
    module, name, consts = spec
    t0 = time.time()
    try:
        from argus.ops.library import generated
        from argus.runtime.build import BuildOptions, build_kernel
        build_kernel(generated(module, name, **consts).source, BuildOptions())
        return spec, None, time.time() - t0
    except Exception as err:   # reported per specialisation, the sweep goes on
        return spec, f"{type(err).__name__}: {err}"[:300], time.time() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="11,12")
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--layouts", default="kn,nk")
    ap.add_argument("--budget-s", type=float, default=330.0)
    ap.add_argument("--build-workers", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=12)
    args = ap.parse_args()
    start = time.time()

    from argus.bench.gemm_shapes import draw
    from argus.ops.gemm_model import choose, space

    cases = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        for shape in draw(args.count, seed):
            if shape.n % 8 or shape.k % 8:
                continue          # the unaligned path pads; the sweep prices the kernels
            for layout in args.layouts.split(","):
                configs = []
                chosen = choose(shape.m, shape.n, shape.k, layout)
                for knobs in space(shape.m, shape.n, shape.k, layout) + [chosen]:
                    try:
                        spec = specialisation(layout, shape.m, shape.n, shape.k, knobs)
                    except Exception as err:
                        print(f"refused {shape.text()} {layout} {knobs}: {err}", flush=True)
                        continue
                    if all(c[0] != knobs for c in configs):
                        configs.append((knobs, spec))
                cases.append({"seed": seed, "m": shape.m, "n": shape.n, "k": shape.k,
                              "family": shape.family, "source": shape.source,
                              "layout": layout, "configs": configs, "model": chosen})
    specs = {}
    for case in cases:
        for _, spec in case["configs"]:
            key = (spec[0], spec[1], tuple(sorted(spec[2].items())))
            specs[key] = spec
    print(f"{len(cases)} cases, {sum(len(c['configs']) for c in cases)} timings, "
          f"{len(specs)} specialisations", flush=True)

    failed_builds = {}
    with ProcessPoolExecutor(args.build_workers) as pool:
        futures = [pool.submit(_build, spec) for spec in specs.values()]
        for done, fut in enumerate(as_completed(futures), 1):
            spec, err, secs = fut.result()
            if err:
                failed_builds[(spec[0], spec[1], tuple(sorted(spec[2].items())))] = err
                print(f"build failed {spec}: {err}", flush=True)
            if done % 20 == 0:
                print(f"built {done}/{len(futures)} ({time.time() - start:.0f}s)", flush=True)
    print(f"builds done in {time.time() - start:.0f}s, {len(failed_builds)} failed", flush=True)

    import torch

    from argus.bench.timing import EventClock, L2Flusher, TimingConfig, alternate_rounds
    from argus.ops.library import library_kernel
    from argus.ops.matmul import run_plan

    clock, flush = EventClock(), L2Flusher()

    def before_each():
        # L2 flushed, then ~50 us of GPU sleep: the host queues the start marker and the call
        # before the GPU reaches them, so host time per call stays out of the GPU's timeline
        flush()
        torch.cuda._sleep(100_000)
    cfg = TimingConfig(warmup=2, reps=args.reps, rounds=3, graphs="never")
    rows = []
    gen = torch.Generator(device="cuda").manual_seed(1234)
    for case in cases:
        m, n, k, layout = case["m"], case["n"], case["k"], case["layout"]
        row = {key: case[key] for key in ("seed", "m", "n", "k", "family", "source", "layout",
                                          "model")}
        row["configs"] = []
        rows.append(row)
        if time.time() - start > args.budget_s:
            row["timed"] = False
            continue
        row["timed"] = True
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        b_stored = torch.randn((k, n) if layout == "kn" else (n, k), device="cuda",
                               dtype=torch.bfloat16, generator=gen)
        b = b_stored if layout == "kn" else b_stored.t()
        want = torch.matmul(a, b).double()
        scale = max(1.0, want.abs().max().item())
        peer_out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        kernels = {"cublas": lambda: torch.matmul(a, b, out=peer_out)}
        outs = {}
        for i, (knobs, spec) in enumerate(case["configs"]):
            key = (spec[0], spec[1], tuple(sorted(spec[2].items())))
            entry = {"knobs": knobs}
            row["configs"].append(entry)
            if key in failed_builds:
                entry["error"] = failed_builds[key]
                continue
            try:
                launcher = library_kernel(spec[0], spec[1], **spec[2])
                split = library_kernel("gemm_splitk", "splitk_round", DT=spec[2]["DT"]) \
                    if spec[0] == "gemm_splitk" else None
                out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
                run_plan(launcher, split, a, b_stored, out)
                torch.cuda.synchronize()
                err = (out.double() - want).abs().max().item() / scale
                entry["rel_err"] = err
                if not (err < 2e-2):    # NaN fails too
                    entry["error"] = f"wrong result (relative error {err:.3g})"
                    continue
                outs[i] = out
                kernels[f"c{i}"] = (lambda l=launcher, s=split, o=out:
                                    run_plan(l, s, a, b_stored, o))
            except Exception as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"[:300]
        try:
            samples = alternate_rounds(kernels, clock, cfg, before_each=before_each)
        except Exception as exc:
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        med = {name: sorted(v)[len(v) // 2] for name, v in samples.items()}
        row["cublas_ms"] = med["cublas"]
        best = None
        for i, entry in enumerate(row["configs"]):
            if f"c{i}" in med:
                entry["ms"] = med[f"c{i}"]
                entry["ratio_to_cublas"] = med["cublas"] / med[f"c{i}"]
                if best is None or entry["ms"] < best["ms"]:
                    best = entry
        row["best"] = best and {"knobs": best["knobs"], "ratio_to_cublas": best["ratio_to_cublas"]}
        chosen = next((e for e in row["configs"] if e["knobs"] == case["model"]), None)
        print(f"{m}x{n}x{k} {layout} {case['family']}: cublas {med['cublas']:.4f} ms, best "
              f"{best and round(best['ratio_to_cublas'], 3)} {best and best['knobs']}, model "
              f"{chosen and chosen.get('ratio_to_cublas') and round(chosen['ratio_to_cublas'], 3)}"
              f" ({time.time() - start:.0f}s)", flush=True)
        del a, b_stored, b, want, outs
    result = {"device": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ",
              time.gmtime()), "args": vars(args), "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out} ({time.time() - start:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
