"""Issue 17 on the H200: the gate-up GEMM's token-row gather, "tma" (one TMA box a row, all
from one producer thread: the measured bottleneck) against "warpgroup" (gather_cp_async:
every producer thread copies its 16-byte chunks with cp.async), in one run on one GPU.

    python scripts/device_moe_gather_ab.py plan                  # CPU: what would be built
    python scripts/device_moe_gather_ab.py build   --out DIR     # every kernel, both forms
    python scripts/device_moe_gather_ab.py time    --out DIR [--shapes mixtral-512,...]
    python scripts/device_moe_gather_ab.py correct --out DIR [--cases tails,...]

build: every specialisation the timed shapes and the correctness cases launch, for both forms,
built in parallel into the disk cache (ARGUS_CACHE_DIR), with the ptxas report of each gate-up
(registers, spill bytes). time: per shape, the whole layer (argus.ops.moe, as a user calls it)
and the gate-up launch alone (on buffers a run of the layer filled), for both forms, in
alternating rounds of one timing loop (argus.bench.moe_bench.time_ms), then the two peers of
the benchmark once (the stronger one's ratio per form); gate-up TFLOP/s = 4 T k H I / time.
correct: argus.bench.moe_bench's layer cases against the fp64 torch reference, outputs poisoned
with NaN first, for each form. Each phase prints a line per step and writes its JSON
(moe-gather-ab-<phase>.json under --out) as it goes, so a phase cut by its time bound keeps
what it measured.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FORMS = ("tma", "warpgroup")
SHAPES = ("mixtral-512", "mixtral-4096", "finegrained-4096")
T0 = time.time()


def say(msg: str) -> None:
    print(f"[{time.time() - T0:6.1f} s] {msg}", flush=True)


def moe_module():
    # the module: `import argus.ops.moe` binds the function of that name
    return importlib.import_module("argus.ops.moe")


DEFAULT = moe_module().GATE_UP_GATHER     # restored after each phase


def with_gather(form: str):
    """Set the gate-up gather of every later argus.ops.moe call (config_for reads it)."""
    moe_module().GATE_UP_GATHER = form


def plan(shapes, cases) -> list:
    """(module, kernel, overrides) of every launch of the run, both forms, deduplicated."""
    from argus.bench import moe_bench as mb

    layers = [mb.SHAPES[n] for n in shapes]
    layers += [(t, e, k, h, i) for name, t, e, k, h, i, _ in mb.CORRECTNESS if name in cases]
    specs = {}
    for form in FORMS:
        with_gather(form)
        for t, e, k, h, i in layers:
            for spec in moe_module().kernels_for(t, e, h, i, k, True, True, "bf16").values():
                specs[(spec[0], spec[1], tuple(sorted(spec[2].items())))] = spec
    with_gather(DEFAULT)
    return list(specs.values())


def _build(spec):
    from argus.codegen import generate
    from argus.ops.library import kernel_ir
    from argus.runtime.build import BuildOptions, build_kernel

    module, name, overrides = spec
    start = time.perf_counter()
    row = {"module": module, "kernel": name, "overrides": overrides}
    try:
        entry = build_kernel(generate(kernel_ir(module, name, **overrides)).source,
                             BuildOptions())
        k = entry.resources.kernels.get(name)
        if k is not None:
            row.update(registers=k.registers, spill_store_bytes=k.spill_store_bytes,
                       spill_load_bytes=k.spill_load_bytes, stack_frame_bytes=k.stack_frame_bytes)
        row["ok"] = True
    except Exception as exc:        # reported; the launch will say it again
        row.update(ok=False, error=f"{type(exc).__name__}: {exc}")
    row["seconds"] = round(time.perf_counter() - start, 1)
    return row


def build(args) -> int:
    from concurrent.futures import ProcessPoolExecutor

    specs = plan(args.shapes, args.cases)
    # the gate-ups first: what the A/B is about, and the longest builds of the list
    specs.sort(key=lambda s: s[1] != "moe_gate_up")
    say(f"building {len(specs)} kernels on {os.cpu_count()} CPUs")
    rows = []
    with ProcessPoolExecutor(max(1, min(len(specs), os.cpu_count() or 1))) as pool:
        for row in pool.map(_build, specs):
            rows.append(row)
            spill = (f" regs {row.get('registers')} spill {row.get('spill_store_bytes')}/"
                     f"{row.get('spill_load_bytes')} B") if "registers" in row else ""
            say(f"{'built' if row['ok'] else 'FAILED'} {row['module']}::{row['kernel']} "
                f"{row['overrides']}{spill} ({row['seconds']} s){' ' + row.get('error', '')}")
            write(args.out, "build", {"rows": rows})
    return 0 if all(r["ok"] for r in rows) else 1


def time_shapes(args) -> int:
    import torch

    from argus.bench import moe_bench as mb

    op = moe_module()
    gm_missing = mb.grouped_mm_available(torch)
    rows = []
    for name in args.shapes:
        t, e, k, h, i = mb.SHAPES[name]
        say(f"{name}: inputs (T={t} E={e} k={k} H={h} I={i})")
        x, L, w13, w2 = mb.make_inputs(torch, t, e, k, h, i, "random", 11, "cuda")
        fns = {}
        for form in FORMS:
            with_gather(form)
            _, steps = op.launches(x, L, w13, w2, k)
            for _, step in steps:           # fill the buffers the gate-up reads (ids, counts)
                step()
            fns[f"gate_up_{form}"] = dict(steps)["gate_up"]
            fns[f"layer_{form}"] = (lambda f=form: (with_gather(f), op.moe(x, L, w13, w2, k)))
            fns[f"layer_{form}"]()          # load its kernels before the timing
        torch.cuda.synchronize()
        say(f"{name}: timing {', '.join(fns)}")
        ms = mb.time_ms(torch, fns)
        with_gather(DEFAULT)
        peers = {}
        if not args.no_peers:
            w13_cat = w13.permute(1, 0, 2, 3).reshape(e, 2 * i, h).contiguous()
            pf = {"loop": lambda: mb.peer_loop(torch, x, L, w13_cat, w2, k, i)}
            if gm_missing is None:
                w13_t, w2_t = w13_cat.transpose(1, 2), w2.transpose(1, 2)
                pf["grouped_mm"] = lambda: mb.peer_grouped_mm(torch, x, L, w13_t, w2_t, k, i)
            say(f"{name}: timing the peers {', '.join(pf)}")
            peers = mb.time_ms(torch, pf, rounds=5)
        gate_flops = 2 * 2.0 * t * k * h * i
        row = {"shape": name, "T": t, "E": e, "k": k, "H": h, "I": i, "ms": ms, "peers_ms": peers,
               "gate_up_tflops": {f: gate_flops / (ms[f"gate_up_{f}"] * 1e-3) / 1e12
                                  for f in FORMS},
               "layer_tflops": {f: mb.flops(t, k, h, i) / (ms[f"layer_{f}"] * 1e-3) / 1e12
                                for f in FORMS},
               "gate_up_speedup": ms["gate_up_tma"] / ms["gate_up_warpgroup"],
               "layer_speedup": ms["layer_tma"] / ms["layer_warpgroup"]}
        if peers:
            best = min(peers.values())
            row["ratio_vs_stronger"] = {f: best / ms[f"layer_{f}"] for f in FORMS}
        rows.append(row)
        say(f"{name}: gate-up tma {ms['gate_up_tma']:.3f} ms / warpgroup "
            f"{ms['gate_up_warpgroup']:.3f} ms ({row['gate_up_speedup']:.2f}x, "
            f"{row['gate_up_tflops']['warpgroup']:.0f} TFLOP/s); layer "
            f"{ms['layer_tma']:.3f} / {ms['layer_warpgroup']:.3f} ms"
            + (f"; vs stronger peer {row['ratio_vs_stronger']['tma']:.3f} / "
               f"{row['ratio_vs_stronger']['warpgroup']:.3f}" if peers else ""))
        write(args.out, "time", {"device": torch.cuda.get_device_name(), "rows": rows})
    return 0


def correct(args) -> int:
    import torch

    from argus.bench import moe_bench as mb

    rows = []
    index = {case[0]: n for n, case in enumerate(mb.CORRECTNESS)}
    for name in args.cases:                        # in the order asked for
        n = index[name]
        _, t, e, k, h, i, logits = mb.CORRECTNESS[n]
        for form in FORMS:
            with_gather(form)
            try:
                row = mb.check_case(torch, name, t, e, k, h, i, logits, 100 + n, "cuda")
            except Exception as exc:
                row = {"case": name, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
            row["gather"] = form
            rows.append(row)
            say(f"{name} [{form}]: {'ok' if row['ok'] else 'WRONG'} "
                f"{row.get('max_abs_err', row.get('error'))}")
            write(args.out, "correct", {"device": torch.cuda.get_device_name(), "rows": rows})
    with_gather(DEFAULT)
    return 0 if all(r["ok"] for r in rows) else 1


def write(out: str, phase: str, data: dict) -> None:
    os.makedirs(out, exist_ok=True)
    data = dict(data, phase=phase, forms=list(FORMS), seconds=round(time.time() - T0, 1))
    with open(os.path.join(out, f"moe-gather-ab-{phase}.json"), "w") as f:
        json.dump(data, f, indent=1, default=str)


def main(argv=None) -> int:
    from argus.bench import moe_bench as mb

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("phase", choices=("plan", "build", "time", "correct"))
    p.add_argument("--out", default="out/device")
    p.add_argument("--shapes", default=",".join(SHAPES))
    p.add_argument("--cases", default=",".join(c[0] for c in mb.CORRECTNESS))
    p.add_argument("--no-peers", action="store_true", help="time only the two forms")
    args = p.parse_args(argv)
    args.shapes = [s for s in args.shapes.split(",") if s]
    args.cases = [c for c in args.cases.split(",") if c]
    unknown = [s for s in args.shapes if s not in mb.SHAPES] + \
        [c for c in args.cases if c not in {x[0] for x in mb.CORRECTNESS}]
    if unknown:
        p.error(f"unknown shape(s) or case(s): {', '.join(unknown)}")
    if args.phase == "plan":
        for spec in plan(args.shapes, args.cases):
            print(json.dumps(spec))
        return 0
    if args.phase == "build":
        return build(args)
    import torch

    missing = mb.gpu_missing(torch)
    if missing:
        say(f"{missing}; nothing measured")
        return 2
    return time_shapes(args) if args.phase == "time" else correct(args)


if __name__ == "__main__":
    sys.exit(main())
