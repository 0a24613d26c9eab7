"""The MoE layer (argus.ops.moe) against two peers in the same run, on the same inputs:

- `grouped_mm`: torch routing (softmax, topk, argsort, bincount) + torch._grouped_mm for
  both GEMMs (CUTLASS), SiLU * up and the weighted sum in torch;
- `loop`: the same routing, then a per-expert loop of cuBLAS matmuls (the counts read on the
  host: that synchronisation is part of the peer).

    argus bench moe                       # correctness, then timing of the issue's shapes
    argus bench moe --correctness         # only the correctness cases
    argus bench moe --timing --shapes mixtral-4096,decode-mixtral-1
    argus bench moe --sweep               # the knob sweep (prefill and decode shapes)
    (python benchmarks/moe.py ... is the same)

Correctness: fresh random inputs per case, the output memory poisoned with NaN first (the
caching allocator hands the poisoned blocks back), compared with an fp64 torch reference of
the same layer (argus.ops.moe.reference) on a sample of tokens; NaN never passes. Cases
include an empty expert, every token's first choice on one expert, and token counts that are
not multiples of any tile. Timing: CUDA events after warm-up, the median of rounds that
alternate Argus and the peers. Prefill rows carry TFLOP/s (6 T k H I flops) and
`ratio_vs_stronger` = stronger peer time / Argus time; decode rows (T <= 64) carry the bytes of
the expert weights read (only experts that got a token) per second and `bw_ratio` against a
device copy's bandwidth (read + write bytes per second) measured in the same run. Writes
benchmarks/results/moe-<date>.json; exit 1 if a correctness case failed. Without an sm_90
GPU it says so and exits 0 (nothing to measure).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import statistics

# name: (T tokens, E experts, top-k, H hidden, I intermediate)
SHAPES = {
    "mixtral-4096": (4096, 8, 2, 4096, 14336),
    "mixtral-512": (512, 8, 2, 4096, 14336),
    "finegrained-4096": (4096, 64, 6, 2048, 1408),
    "small-experts-8192": (8192, 128, 8, 2048, 768),
    "decode-mixtral-1": (1, 8, 2, 4096, 14336),
    "decode-mixtral-16": (16, 8, 2, 4096, 14336),
    "decode-mixtral-64": (64, 8, 2, 4096, 14336),
    "decode-finegrained-1": (1, 64, 6, 2048, 1408),
    "decode-finegrained-16": (16, 64, 6, 2048, 1408),
    "decode-finegrained-64": (64, 64, 6, 2048, 1408),
}
# (name, T, E, k, H, I, logits): tails everywhere, empty experts, all on one expert
CORRECTNESS = [
    ("tails", 300, 8, 2, 256, 256, "random"),
    ("one-token", 1, 8, 2, 256, 384, "random"),
    ("empty-expert", 200, 8, 2, 256, 256, "empty"),
    ("all-to-one", 333, 8, 2, 256, 256, "one"),
    ("finegrained-tails", 517, 64, 6, 256, 384, "random"),
    ("many-experts", 1000, 128, 8, 256, 256, "random"),
    ("decode-16", 16, 64, 6, 2048, 1408, "random"),
    ("decode-1", 1, 64, 6, 2048, 1408, "random"),        # 64-wide gate-up tiles
    ("mixtral-tail", 1031, 8, 2, 4096, 1024, "random"),
]
SWEEP_SHAPES = ("mixtral-4096", "finegrained-4096", "decode-mixtral-1", "decode-mixtral-16",
                "decode-finegrained-16")
# The knob sweep: each variant's overrides go over config_for's choice for the shape (so a
# knob it does not name, the gather for one, stays the library's), on the prefill shapes,
# the decode ones (T <= DECODE_T) or both. Decode GEMMs stream weights: a deeper k-step
# (BK = 128) halves the per-stage handshakes for the same bytes in flight.
SWEEP = [
    {"label": "default", "when": "any"},
    {"label": "m_major", "when": "prefill", "gate_up": {"ORDER": "m_major"},
     "down": {"ORDER": "m_major"}},
    {"label": "gate_up S3, down BN256 S4", "when": "prefill", "gate_up": {"S": 3},
     "down": {"BN": 256, "S": 4}},
    {"label": "BN64", "when": "prefill", "gate_up": {"BN": 64, "S": 6},
     "down": {"BN": 64, "S": 8}},
    {"label": "BK128", "when": "decode", "gate_up": {"BK": 128, "S": 2},
     "down": {"BK": 128, "S": 4}},
    {"label": "gate_up BK128", "when": "decode", "gate_up": {"BK": 128, "S": 2}},
    {"label": "down BK128", "when": "decode", "down": {"BK": 128, "S": 4}},
    {"label": "gate_up S4", "when": "decode", "gate_up": {"S": 4}},
    {"label": "down S6", "when": "decode", "down": {"S": 6}},
    {"label": "gate_up S4, down BK128", "when": "decode", "gate_up": {"S": 4},
     "down": {"BK": 128, "S": 4}},
    # over the default (128-wide tiles, one warpgroup since 2026-12-06): shallower rings,
    # and the down GEMM's items twice as long again or half as long
    {"label": "down BN256 S4", "when": "decode", "down": {"BN": 256, "S": 4}},
    {"label": "down BN256 S5", "when": "decode", "down": {"BN": 256, "S": 5}},
    {"label": "down BN64 S8", "when": "decode", "down": {"BN": 64, "S": 8}},
]


def sweep_config(variant: dict, t, e, k, h, i, config_for=None) -> dict | None:
    """The configuration a sweep variant gives a shape (its overrides over the library's
    choice, `config_for` as argus.ops.moe defines it: the sweep replaces that attribute while
    it times, so it passes the original), or None where the variant is not for this kind of
    shape."""
    if config_for is None:
        from argus.ops.moe import config_for
    when = variant.get("when", "any")
    if when != "any" and (when == "decode") != is_decode(t):
        return None
    base = config_for(t, e, h, i, k)
    return {part: {**base[part], **variant.get(part, {})} for part in ("gate_up", "down")}


def flops(t, k, h, i) -> float:
    return 6.0 * t * k * h * i


def is_decode(t) -> bool:
    return t <= 64


def geomean(values):
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def make_inputs(torch, t, e, k, h, i, logits="random", seed=0, device="cuda",
                dtype=None):
    """x, router_logits, w13 (2, E, I, H), w2 (E, H, I) on `device`; `logits`: "random",
    "empty" (expert 1 never chosen), "one" (every token's first choice is expert 0)."""
    dtype = dtype or torch.bfloat16
    g = torch.Generator(device=device).manual_seed(seed)

    def randn(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g, device=device) * scale).to(dtype)

    x = randn(t, h)
    L = torch.randn(t, e, generator=g, device=device)
    if logits == "empty":
        L[:, 1] = -30.0
    elif logits == "one":
        L[:, 0] += 30.0
    return x, L, randn(2, e, i, h, scale=h ** -0.5), randn(e, h, i, scale=i ** -0.5)


def poison(torch, device, nbytes):
    """Fill `nbytes` of the caching allocator's memory with NaN and free it, so the layer's
    torch.empty outputs start as NaN."""
    junk = torch.full((max(nbytes // 2, 1),), float("nan"), dtype=torch.bfloat16, device=device)
    del junk


def compare(torch, out, ref, sample):
    """(ok, max abs error, max |ref|) on the sampled tokens; NaN or inf never passes."""
    got = out[sample].double()
    want = ref.double()
    finite = bool(torch.isfinite(got).all())
    err = float((got - want).abs().max()) if got.numel() else 0.0
    scale = float(want.abs().max()) if want.numel() else 0.0
    tol = 2 ** -6 * scale + 1e-3      # bf16 outputs of sums of bf16-rounded expert rows
    return finite and err <= tol, err, scale


def check_case(torch, name, t, e, k, h, i, logits, seed, device, deterministic=True):
    from argus.ops import moe
    from argus.ops.moe import reference

    x, L, w13, w2 = make_inputs(torch, t, e, k, h, i, logits, seed, device)
    poison(torch, device, 4 * t * k * (h + i) * 2 + (1 << 20))
    out = moe(x, L, w13, w2, k, True, deterministic)
    torch.cuda.synchronize()
    sample = torch.randperm(t, generator=torch.Generator().manual_seed(seed))[:256].to(device)
    ref = reference(x[sample], L[sample], w13, w2, k, True)
    ok, err, scale = compare(torch, out, ref, sample)
    return {"case": name, "T": t, "E": e, "k": k, "H": h, "I": i, "logits": logits,
            "deterministic": deterministic, "ok": ok, "max_abs_err": err, "max_abs_ref": scale}


def graph_replay_equal(torch, device):
    """Capture the layer in a CUDA graph, replay it on new inputs copied into the captured
    buffers, and compare with an eager call: bit-identical in deterministic mode."""
    from argus.ops import moe

    t, e, k, h, i = 300, 8, 2, 256, 256
    x, L, w13, w2 = make_inputs(torch, t, e, k, h, i, "random", 1, device)
    moe(x, L, w13, w2, k)                       # build and warm up outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = moe(x, L, w13, w2, k)
    x2, L2, _, _ = make_inputs(torch, t, e, k, h, i, "one", 2, device)
    x.copy_(x2)
    L.copy_(L2)
    graph.replay()
    torch.cuda.synchronize()
    eager = moe(x, L, w13, w2, k)
    torch.cuda.synchronize()
    return {"case": "cuda-graph-replay", "ok": bool(torch.equal(out, eager)),
            "max_abs_diff": float((out.double() - eager.double()).abs().max())}


# ---- peers ------------------------------------------------------------------------------

def torch_routing(torch, L, k, renormalize=True):
    probs = torch.softmax(L.float(), dim=1)
    weights, experts = torch.topk(probs, k, dim=1)
    if renormalize:
        weights = weights / weights.sum(dim=1, keepdim=True)
    flat = experts.reshape(-1)
    order = torch.argsort(flat, stable=True)
    counts = torch.bincount(flat, minlength=L.shape[1])
    return weights.reshape(-1)[order], order, order // k, counts


def grouped_mm_available(torch) -> str | None:
    """None when torch._grouped_mm runs bf16 on this GPU, else why not."""
    fn = getattr(torch, "_grouped_mm", None)
    if fn is None:
        return f"torch {torch.__version__} has no torch._grouped_mm"
    try:
        a = torch.randn(64, 64, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(2, 64, 64, device="cuda", dtype=torch.bfloat16)
        fn(a, b, offs=torch.tensor([32, 64], device="cuda", dtype=torch.int32))
        torch.cuda.synchronize()
    except Exception as exc:      # the peer is then reported missing, not the bench broken
        return f"torch._grouped_mm failed: {type(exc).__name__}: {exc}"
    return None


def peer_grouped_mm(torch, x, L, w13_t, w2_t, k, inter):
    """w13_t: (E, H, 2I) (the transposed gate|up weights), w2_t: (E, I, H)."""
    t, h = x.shape
    w, order, tok, counts = torch_routing(torch, L, k)
    offs = torch.cumsum(counts, 0, dtype=torch.int32)
    h13 = torch._grouped_mm(x[tok], w13_t, offs=offs)
    act = torch.nn.functional.silu(h13[:, :inter]) * h13[:, inter:]
    y = torch._grouped_mm(act, w2_t, offs=offs) * w[:, None].to(x.dtype)
    out = torch.empty((t * k, h), dtype=x.dtype, device=x.device)
    out[order] = y
    return out.view(t, k, h).sum(dim=1)


def peer_loop(torch, x, L, w13_cat, w2, k, inter):
    """w13_cat: (E, 2I, H). A cuBLAS matmul pair per expert that got tokens."""
    t, h = x.shape
    w, order, tok, counts = torch_routing(torch, L, k)
    xs = x[tok]
    y = torch.empty((t * k, h), dtype=x.dtype, device=x.device)
    start = 0
    for e, c in enumerate(counts.tolist()):
        if c:
            rows = xs[start:start + c]
            h13 = rows @ w13_cat[e].T
            act = torch.nn.functional.silu(h13[:, :inter]) * h13[:, inter:]
            y[start:start + c] = act @ w2[e].T
        start += c
    y = y * w[:, None].to(x.dtype)
    out = torch.empty_like(y)
    out[order] = y
    return out.view(t, k, h).sum(dim=1)


# ---- timing -----------------------------------------------------------------------------

def time_ms(torch, fns: dict, rounds=7, reps=5, warmup=2):
    """Median ms per call of each function, rounds alternating between them."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    torch.cuda.synchronize()
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(reps):
                fn()
            end.record()
            end.synchronize()
            samples[name].append(start.elapsed_time(end) / reps)
    return {name: statistics.median(v) for name, v in samples.items()}


def copy_bandwidth(torch, nbytes=1 << 30):
    """Bytes per second of a device-to-device copy (read + write), measured now."""
    src = torch.empty(nbytes // 2, dtype=torch.bfloat16, device="cuda").fill_(1.0)
    dst = torch.empty_like(src)
    ms = time_ms(torch, {"copy": lambda: dst.copy_(src)}, rounds=5, reps=10)["copy"]
    return 2 * nbytes / (ms * 1e-3)


def expert_bytes_read(torch, L, k, h, i, elem=2):
    """Bytes of the weights of the experts that got a token (3 I H elements each)."""
    hit = torch.unique(torch.topk(L.float(), k, dim=1).indices).numel()
    return hit, hit * 3 * i * h * elem


def time_shape(torch, name, t, e, k, h, i, copy_bw, gm_missing, configs=None):
    from argus.ops import moe

    x, L, w13, w2 = make_inputs(torch, t, e, k, h, i, "random", 11, "cuda")
    w13_cat = w13.permute(1, 0, 2, 3).reshape(e, 2 * i, h).contiguous()
    fns = {"argus": lambda: moe(x, L, w13, w2, k)}
    if gm_missing is None:
        w13_t = w13_cat.transpose(1, 2)
        w2_t = w2.transpose(1, 2)
        fns["grouped_mm"] = lambda: peer_grouped_mm(torch, x, L, w13_t, w2_t, k, i)
    fns["loop"] = lambda: peer_loop(torch, x, L, w13_cat, w2, k, i)
    ms = time_ms(torch, fns)
    peers = {n: v for n, v in ms.items() if n != "argus"}
    stronger = min(peers, key=peers.get)
    row = {"shape": name, "T": t, "E": e, "k": k, "H": h, "I": i, "ms": ms,
           "stronger_peer": stronger, "ratio_vs_stronger": peers[stronger] / ms["argus"],
           "ratio_vs_grouped_mm": (peers["grouped_mm"] / ms["argus"]) if "grouped_mm" in peers
           else None,
           "ratio_vs_loop": peers["loop"] / ms["argus"],
           "tflops": {n: flops(t, k, h, i) / (v * 1e-3) / 1e12 for n, v in ms.items()}}
    if is_decode(t):
        hit, nbytes = expert_bytes_read(torch, L, k, h, i)
        row.update({"experts_hit": hit, "weight_bytes": nbytes,
                    "bytes_per_s": {n: nbytes / (v * 1e-3) for n, v in ms.items()},
                    "copy_bytes_per_s": copy_bw,
                    "bw_ratio": nbytes / (ms["argus"] * 1e-3) / copy_bw})
    return row


def enqueue_us(torch, fn, calls=20, rounds=5) -> float:
    """The host's microseconds to enqueue one call of fn (median of `rounds` runs of
    `calls` calls, no sync inside a run): what a call costs the host, apart from the GPU's
    time (scripts/device_host_overhead.py's per_call_us syncs inside its timed span, which
    for a GPU-bound call is the GPU's time)."""
    import time

    fn()
    samples = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    torch.cuda.synchronize()
    return statistics.median(samples)


def kernel_gpu_us(torch, fn, calls=5) -> dict:
    """{kernel name: GPU microseconds per launch} over `calls` calls of fn, from
    torch.profiler's device timestamps: what each kernel costs the GPU, which events around
    back-to-back launches of a few-microsecond kernel do not show (they time the host's
    launches; 2026-12-07, docs/perf-log.md)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    out = {}
    for ev in prof.key_averages():
        total = getattr(ev, "device_time_total", None)
        if total is None:
            total = getattr(ev, "cuda_time_total", 0)
        if total and ev.count:
            out[ev.key[:60]] = total / ev.count
    return out


def breakdown(torch, name, t, e, k, h, i):
    """Each launch of the layer timed alone (on buffers one run of the whole layer filled;
    `ms`: events around back-to-back launches, which for the router's few-microsecond
    kernels is the host's launch time), each kernel's GPU time in a whole layer call
    (`gpu_us`, torch.profiler), the shares of the GPU time, and the GEMMs' TFLOP/s from it:
    where the layer's time goes."""
    from argus.ops.moe import launches, moe

    x, L, w13, w2 = make_inputs(torch, t, e, k, h, i, "random", 11, "cuda")
    _, steps = launches(x, L, w13, w2, k)
    for _, step in steps:
        step()
    ms = time_ms(torch, dict(steps))
    moe(x, L, w13, w2, k)
    gpu = kernel_gpu_us(torch, lambda: moe(x, L, w13, w2, k))
    total = sum(gpu.values()) or 1.0
    gemm_flops = {"moe_gate_up": 2 * 2.0 * t * k * h * i, "moe_down": 2.0 * t * k * i * h}
    return {"shape": name, "T": t, "E": e, "k": k, "H": h, "I": i, "ms": ms, "gpu_us": gpu,
            "share": {n: v / total for n, v in gpu.items()},
            "gemm_tflops": {n: f / (gpu[n] * 1e-6) / 1e12 for n, f in gemm_flops.items()
                            if gpu.get(n)}}


def sweep(torch, copy_bw, gm_missing, shapes=None):
    """Each SWEEP variant timed on each of `shapes` (names among SHAPES; SWEEP_SHAPES when
    None)."""
    import importlib

    shapes = SWEEP_SHAPES if shapes is None else shapes
    # the module: `import argus.ops.moe as op` binds the function argus.ops.moe, and setting
    # config_for on it changed nothing (every configuration timed the default one)
    op = importlib.import_module("argus.ops.moe")

    rows = []
    if copy_bw is None and any(is_decode(SHAPES[n][0]) for n in shapes):
        copy_bw = copy_bandwidth(torch)
    original = op.config_for
    try:
        for name in shapes:
            t, e, k, h, i = SHAPES[name]
            for variant in SWEEP:
                cfg = sweep_config(variant, t, e, k, h, i, original)
                if cfg is None:
                    continue
                op.config_for = lambda *a, c=cfg: c
                row = {"shape": name, "variant": variant["label"], "config": cfg}
                try:
                    from argus.ops import moe
                    x, L, w13, w2 = make_inputs(torch, t, e, k, h, i, "random", 3, "cuda")
                    ms = time_ms(torch, {"argus": lambda: moe(x, L, w13, w2, k)}, rounds=5)
                    row.update(ms=ms["argus"],
                               tflops=flops(t, k, h, i) / (ms["argus"] * 1e-3) / 1e12)
                    if is_decode(t) and copy_bw:
                        hit, nbytes = expert_bytes_read(torch, L, k, h, i)
                        row.update(bw_ratio=nbytes / (ms["argus"] * 1e-3) / copy_bw)
                except Exception as exc:
                    row["error"] = f"{type(exc).__name__}: {exc}"
                rows.append(row)
                print(json.dumps(rows[-1]), flush=True)
    finally:
        op.config_for = original
    return rows


def planned_kernels(shapes, with_correctness=True, with_sweep=False):
    """Every (module, kernel, overrides) the run will launch, deduplicated."""
    from argus.ops.moe import kernels_for

    cases = [(t, e, k, h, i) for t, e, k, h, i in shapes]
    if with_correctness:
        cases += [(t, e, k, h, i) for _, t, e, k, h, i, _ in CORRECTNESS] + [(300, 8, 2, 256, 256)]
    plans = {}
    for t, e, k, h, i in cases:
        for det in (True, False):
            for spec in kernels_for(t, e, h, i, k, True, det, "bf16").values():
                plans[(spec[0], spec[1], tuple(sorted(spec[2].items())))] = spec
    if with_sweep:
        for name in SWEEP_SHAPES:
            t, e, k, h, i = SHAPES[name]
            for variant in SWEEP:
                cfg = sweep_config(variant, t, e, k, h, i)
                if cfg is None:
                    continue
                for spec in kernels_for(t, e, h, i, k, True, True, "bf16", cfg).values():
                    plans[(spec[0], spec[1], tuple(sorted(spec[2].items())))] = spec
    return list(plans.values())


def _build_one(spec):
    import time

    from argus.codegen import generate
    from argus.ops.library import kernel_ir
    from argus.runtime.build import BuildOptions, build_kernel

    module, name, overrides = spec
    start = time.perf_counter()
    try:
        build_kernel(generate(kernel_ir(module, name, **overrides)).source, BuildOptions())
        return f"built {module}::{name} {overrides} in {time.perf_counter() - start:.1f}s"
    except Exception as exc:      # reported, and the launch itself will say it again
        return f"FAILED {module}::{name} {overrides}: {type(exc).__name__}: {exc}"


def prebuild(specs, jobs=None) -> list[str]:
    """Build every specialisation into the disk cache in parallel processes (the launches
    then load them), so compile time stays out of the timed phases."""
    from concurrent.futures import ProcessPoolExecutor

    jobs = jobs or max(1, min(len(specs), os.cpu_count() or 1))
    with ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(_build_one, specs))


def gpu_missing(torch) -> str | None:
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible"
    major, minor = torch.cuda.get_device_capability()
    if (major, minor) != (9, 0):
        return f"the GPU is sm_{major}{minor}; the MoE kernels are built for sm_90a (H100/H200)"
    return None


def main(argv=None, prog=None) -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("--correctness", action="store_true", help="only the correctness cases")
    p.add_argument("--timing", action="store_true", help="only the timing")
    p.add_argument("--sweep", action="store_true",
                   help="only the knob sweep (SWEEP over SWEEP_SHAPES, or the --shapes)")
    p.add_argument("--breakdown", action="store_true",
                   help="only each launch of the layer timed alone, per shape")
    p.add_argument("--shapes", default="", help=f"names among {', '.join(SHAPES)}")
    p.add_argument("--out", default="benchmarks/results", help="directory of the JSON")
    p.add_argument("--prebuild", action="store_true",
                   help="only build every kernel the run would launch (no GPU needed)")
    args = p.parse_args(argv)
    names = [s for s in args.shapes.split(",") if s] or list(SHAPES)
    unknown = [s for s in names if s not in SHAPES]
    if unknown:
        p.error(f"unknown shape(s) {', '.join(unknown)}; known: {', '.join(SHAPES)}")
    if args.prebuild:
        lines = prebuild(planned_kernels([SHAPES[n] for n in names], True, True))
        print("\n".join(lines))
        return 1 if any(line.startswith("FAILED") for line in lines) else 0
    try:
        import torch
    except ImportError:
        print("argus bench moe: torch is not installed; nothing measured")
        return 0
    missing = gpu_missing(torch)
    if missing:
        print(f"argus bench moe: {missing}; nothing measured")
        return 0
    if args.breakdown:
        rows = []
        for name in names:
            try:
                rows.append(breakdown(torch, name, *SHAPES[name]))
            except Exception as exc:
                rows.append({"shape": name, "error": f"{type(exc).__name__}: {exc}"})
            print(json.dumps(rows[-1]), flush=True)
        path = os.path.join(args.out, f"moe-breakdown-{dt.date.today():%Y%m%d}.json")
        os.makedirs(args.out, exist_ok=True)
        with open(path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)
        print(f"wrote {path}")
        return 1 if any("error" in r for r in rows) else 0
    do_all = not (args.correctness or args.timing or args.sweep)
    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
              "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    failed = False
    if do_all or args.correctness:
        cases = []
        for n, (name, t, e, k, h, i, logits) in enumerate(CORRECTNESS):
            for det in (True, False):
                try:
                    row = check_case(torch, name, t, e, k, h, i, logits, 100 + n, "cuda", det)
                except Exception as exc:
                    row = {"case": name, "deterministic": det, "ok": False,
                           "error": f"{type(exc).__name__}: {exc}"}
                cases.append(row)
                print(json.dumps(row), flush=True)
        try:
            row = graph_replay_equal(torch, "cuda")
        except Exception as exc:
            row = {"case": "cuda-graph-replay", "ok": False,
                   "error": f"{type(exc).__name__}: {exc}"}
        cases.append(row)
        print(json.dumps(row), flush=True)
        report["correctness"] = cases
        failed = not all(c["ok"] for c in cases)
    gm_missing = grouped_mm_available(torch) if (do_all or args.timing or args.sweep) else None
    if gm_missing:
        report["grouped_mm_unavailable"] = gm_missing
        print(f"peer torch._grouped_mm: {gm_missing}")
    copy_bw = None
    if do_all or args.timing:
        copy_bw = copy_bandwidth(torch)
        report["copy_bytes_per_s"] = copy_bw
        rows = []
        for name in names:
            try:
                row = time_shape(torch, name, *SHAPES[name], copy_bw, gm_missing)
            except Exception as exc:
                row = {"shape": name, "error": f"{type(exc).__name__}: {exc}"}
            rows.append(row)
            print(json.dumps(row), flush=True)
        report["timing"] = rows
        prefill = [r.get("ratio_vs_stronger") for r in rows if "error" not in r
                   and not is_decode(r["T"])]
        decode = [r.get("bw_ratio") for r in rows if "error" not in r and is_decode(r["T"])]
        report["geomean_ratio_vs_stronger_prefill"] = geomean(prefill)
        report["min_ratio_vs_stronger_prefill"] = min(prefill) if prefill else None
        report["geomean_bw_ratio_decode"] = geomean(decode)
        report["min_bw_ratio_decode"] = min(decode) if decode else None
        print(f"prefill geomean ratio vs the stronger peer: "
              f"{report['geomean_ratio_vs_stronger_prefill']}; decode bw ratio geomean "
              f"{report['geomean_bw_ratio_decode']}")
    if args.sweep:
        chosen = names if args.shapes else None     # any shape given by name
        report["sweep"] = sweep(torch, copy_bw, gm_missing, chosen)
    os.makedirs(args.out, exist_ok=True)
    kind = "sweep" if args.sweep else ("correctness" if args.correctness and not args.timing
                                       else "bench")
    path = os.path.join(args.out, f"moe-{kind}-{dt.date.today().isoformat()}.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print(f"wrote {path}")
    return 1 if failed else 0
