"""The DSL flash-attention forward against SDPA's cuDNN and flash backends, same run, same GPU.

    argus bench attention                 # correctness sweep, then timing of the issue's shapes
    argus bench attention --correctness   # only the sweep (tails, GQA, causal SQ != SK, lse)
    argus bench attention --timing --shapes 4x16x16x4096x4096x128c,16x16x16x1024x1024x64
    (python benchmarks/attention.py ... is the same)

A shape is B x HQ x HK x SQ x SK x D, with a trailing "c" for causal (bottom-right aligned)
and ":bshd" for that layout. Correctness: fresh random inputs per case, the outputs
poisoned with NaN first (an unwritten element, or a NaN anywhere, fails), O and the
log-sum-exp against a float64 reference of every row (small shapes) or of sampled rows
(the timed shapes: the first and last rows of the first, a middle and the last head, plus
random rows), with a bound relative to the output's scale (bf16/fp16 rounding of P and O).
Timing: CUDA events around each call after warm-up, L2 flushed before each, alternating
rounds between Argus and the peers; calls under 50 us are timed inside CUDA graphs. The
peers are torch's SDPA under sdpa_kernel(CUDNN_ATTENTION) and sdpa_kernel(FLASH_ATTENTION);
a peer that refuses a case (e.g. a mask it lacks) is recorded as such. Writes
benchmarks/results/attention-<kind>-<date>.json with TFLOP/s per row, the ratios
cuDNN time / Argus time and flash time / Argus time, and their geomeans; exit 1 if a case
failed. Without a GPU it says so in one line and exits 2.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import sys
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Case:
    b: int
    hq: int
    hk: int
    sq: int
    sk: int
    d: int
    causal: bool = False
    layout: str = "bhsd"
    dtype: str = "bf16"

    def text(self) -> str:
        s = f"{self.b}x{self.hq}x{self.hk}x{self.sq}x{self.sk}x{self.d}"
        return s + ("c" if self.causal else "") + (f":{self.layout}" if self.layout != "bhsd"
                                                  else "")

    def kept_pairs(self) -> int:
        """(query, key) pairs the mask keeps, per head: SQ * SK, or causal bottom-right
        sum over q of min(SK, max(0, q + SK - SQ + 1))."""
        if not self.causal:
            return self.sq * self.sk
        off = self.sk - self.sq + 1
        return sum(max(0, min(self.sk, q + off)) for q in range(self.sq))

    def flops(self) -> int:
        """2 GEMMs of 2 flops per multiply-add over the kept pairs (what FlashAttention's
        benchmarks count: causal is about half of non-causal)."""
        return 4 * self.b * self.hq * self.d * self.kept_pairs()


def parse_case(text: str, dtype: str = "bf16") -> Case:
    layout = "bhsd"
    if ":" in text:
        text, layout = text.split(":", 1)
    causal = text.endswith("c")
    nums = [int(x) for x in text.rstrip("c").split("x")]
    if len(nums) != 6:
        raise ValueError(f"shape {text!r}: want BxHQxHKxSQxSKxD[c][:bshd]")
    return Case(*nums, causal=causal, layout=layout, dtype=dtype)


# issue 16's shapes (B, HQ, HK, SQ, SK, D, causal)
TIMED = [Case(4, 16, 16, 4096, 4096, 128), Case(4, 16, 16, 4096, 4096, 128, True),
         Case(1, 16, 16, 16384, 16384, 128, True), Case(2, 16, 16, 8192, 8192, 128),
         Case(16, 16, 16, 1024, 1024, 64), Case(8, 16, 16, 2048, 2048, 64, True),
         Case(4, 32, 8, 4096, 4096, 128, True),                      # GQA 32 / 8
         Case(8, 32, 8, 128, 8192, 128), Case(16, 32, 8, 16, 4096, 128),   # decode-like
         Case(4, 16, 16, 4096, 4096, 128, layout="bshd")]
# tails (lengths off every block size), GQA and MQA, causal with SQ < SK and SQ > SK,
# both layouts, both head dims, tiny sequences
CORRECTNESS = [Case(1, 2, 2, 128, 128, 64), Case(1, 2, 2, 200, 333, 64),
               Case(2, 4, 2, 77, 300, 64, True), Case(1, 4, 1, 300, 77, 64, True),
               Case(1, 2, 2, 1, 1, 64), Case(1, 2, 1, 1, 517, 128),
               Case(2, 3, 3, 129, 129, 128, True), Case(1, 8, 2, 257, 1000, 128),
               Case(2, 4, 4, 190, 190, 64, True, "bshd"), Case(1, 6, 2, 100, 300, 128, True, "bshd"),
               Case(1, 4, 1, 333, 129, 128, False, "bshd"), Case(2, 2, 2, 1024, 1024, 128, True)]
TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}

# what a random draw takes shapes from: (query heads, KV heads) of common models (MHA, GQA
# 4 and 8, MQA), head dims, and sequence lengths of prefill (any length, not only
# multiples of 128) and decode (a few query rows against a long KV cache)
DRAW_HEADS = [(16, 16), (32, 32), (32, 8), (64, 8), (28, 4), (16, 1), (12, 12)]
DRAW_FLOPS = 2e12             # the work a drawn case aims at (~3 ms at 600 TFLOP/s)


def random_cases(n: int, seed: int) -> list[Case]:
    """n cases drawn with `seed` (a fixed generator: the same list on every machine):
    half prefill (SQ = SK in 300..16384, causal or not), a quarter decode-like (SQ in
    1..128 against SK in 1024..16384), a quarter cross (SQ != SK, both in 200..8192);
    head dim 64 or 128, heads from DRAW_HEADS, either layout, the batch (1..64) chosen so
    that the case is about DRAW_FLOPS of work."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = ("prefill", "prefill", "decode", "cross")[i % 4]
        hq, hk = rng.choice(DRAW_HEADS)
        d = rng.choice((64, 128))
        if kind == "prefill":
            sq = sk = int(2 ** rng.uniform(8.2, 14))
            causal = rng.random() < 0.5
        elif kind == "decode":
            sq, sk, causal = rng.randint(1, 128), int(2 ** rng.uniform(10, 14)), rng.random() < 0.5
        else:
            sq, sk = int(2 ** rng.uniform(7.6, 13)), int(2 ** rng.uniform(7.6, 13))
            causal = rng.random() < 0.5
        layout = rng.choice(("bhsd", "bshd"))
        one = Case(1, hq, hk, sq, sk, d, causal, layout)
        b = max(1, min(64, round(DRAW_FLOPS / max(1, one.flops()))))
        out.append(Case(b, hq, hk, sq, sk, d, causal, layout))
    return out


def make_inputs(case: Case, seed: int, device):
    """Fresh q, k, v in the case's layout (normal values: scores of order sqrt(D) before
    scaling, so the softmax is neither flat nor one-hot)."""
    import torch

    g = torch.Generator(device="cpu").manual_seed(seed)
    dtype = getattr(torch, TORCH_DTYPES[case.dtype])

    def one(h, s):
        shape = (case.b, h, s, case.d) if case.layout == "bhsd" else (case.b, s, h, case.d)
        return torch.randn(shape, generator=g).to(dtype).to(device)
    return one(case.hq, case.sq), one(case.hk, case.sk), one(case.hk, case.sk)


def heads_first(x, layout):
    return x if layout == "bhsd" else x.transpose(1, 2)


def reference_rows(q, k, v, causal, scale, rows=None):
    """O and lse in float64 of the given query rows (all when None), inputs (B, H, S, D)."""
    import torch

    q, k, v = (x.double() for x in (q, k, v))
    g = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    sq, sk = q.shape[2], k.shape[2]
    idx = torch.arange(sq, device=q.device) if rows is None else rows.to(q.device)
    s = torch.einsum("bhqd,bhkd->bhqk", q[:, :, idx], k) * scale
    if causal:
        keep = torch.arange(sk, device=q.device)[None, :] <= idx[:, None] + sk - sq
        s = s.masked_fill(~keep, -math.inf)
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - torch.where(torch.isfinite(lse), lse, 0.0)[..., None])
    o = torch.einsum("bhqk,bhkd->bhqd", p, v)
    return o, lse


def compare(got_o, got_lse, ref_o, ref_lse, dtype: str) -> list:
    """Reasons the outputs are wrong (empty: correct). NaN or inf in O fails; lse must be
    -inf exactly where the reference's is (rows keeping no key) and finite elsewhere. The
    bound on O: a fraction of the output's largest magnitude plus half a unit
    of the output's rounding (2^-7 for bf16, 2^-10 for fp16: P and O rounded to 16 bits, fp32
    sums), and a mean error of 2^-10 (2^-13) of it: a key dropped from a row of a few hundred
    moves many elements by more than that."""
    import torch

    reasons = []
    got_o, got_lse = got_o.double(), got_lse.double()
    if not torch.isfinite(got_o).all():
        bad = (~torch.isfinite(got_o)).sum().item()
        reasons.append(f"{bad} element(s) of O are NaN/inf (unwritten or overflowed)")
        return reasons
    scale = max(ref_o.abs().max().item(), 1e-3)
    top, mean_rel = (2 ** -7, 2 ** -10) if dtype == "bf16" else (2 ** -10, 2 ** -13)
    diff = (got_o - ref_o).abs()
    err, mean = diff.max().item(), diff.mean().item()
    if err > top * scale + top / 2:
        reasons.append(f"O max error {err:.3g} over the bound {top * scale + top / 2:.3g}")
    if mean > mean_rel * scale:
        reasons.append(f"O mean error {mean:.3g} over the bound {mean_rel * scale:.3g}")
    ninf = torch.isinf(ref_lse)
    if not torch.equal(torch.isinf(got_lse) & (got_lse < 0), ninf):
        reasons.append("lse is not -inf exactly on the rows that keep no key")
    elif torch.isnan(got_lse).any():
        reasons.append("lse has NaN")
    else:
        fin = ~ninf
        if fin.any():
            lerr = (got_lse[fin] - ref_lse[fin]).abs().max().item()
            if lerr > 1e-3 * max(1.0, ref_lse[fin].abs().max().item()):
                reasons.append(f"lse max error {lerr:.3g}")
    return reasons


def sample_rows(case: Case, seed: int, full_below: int = 1 << 22):
    """None (every row) when the reference is small, else rows to check: the first and last
    64 and 64 random ones (tails and the diagonal's end included)."""
    import torch

    if case.b * case.hq * case.sq * case.sk <= full_below:
        return None
    g = torch.Generator().manual_seed(seed)
    edge = torch.cat([torch.arange(min(64, case.sq)), torch.arange(max(0, case.sq - 64), case.sq)])
    rand = torch.randint(0, case.sq, (64,), generator=g)
    return torch.unique(torch.cat([edge, rand]))


def check_case(case: Case, attention, seed: int, device) -> dict:
    """One correctness case: `attention(q, k, v, causal, scale, layout, out, lse)` writes
    into poisoned outputs; returns {"status", "reasons", "max_abs_error"}."""
    import torch

    q, k, v = make_inputs(case, seed, device)
    scale = 1.0 / math.sqrt(case.d)
    o_shape = tuple(q.shape[:2]) + (q.shape[2], case.d)
    out = torch.full(o_shape, float("nan"), dtype=q.dtype, device=device)
    lse = torch.full((case.b, case.hq, case.sq), float("nan"), dtype=torch.float32,
                     device=device)
    attention(q, k, v, case.causal, scale, case.layout, out, lse)
    rows = sample_rows(case, seed)
    qh, kh, vh = (heads_first(x, case.layout) for x in (q, k, v))
    oh = heads_first(out, case.layout)
    heads = "all"
    lse_sel = lse
    if rows is not None:       # the first and last batch, the first, a middle, the last head
        sel_b = torch.tensor(sorted({0, case.b - 1}), device=q.device)
        sel_h = torch.tensor(sorted({0, case.hq // 2, case.hq - 1}), device=q.device)
        kv_h = sel_h // (case.hq // case.hk)       # each query head's own KV head
        qh, oh, lse_sel = qh[sel_b][:, sel_h], oh[sel_b][:, sel_h], lse[sel_b][:, sel_h]
        kh, vh = kh[sel_b][:, kv_h], vh[sel_b][:, kv_h]
        heads = sel_h.tolist()
    ref_o, ref_lse = reference_rows(qh, kh, vh, case.causal, scale, rows)
    got_o = oh if rows is None else oh[:, :, rows.to(oh.device)]
    got_lse = lse_sel if rows is None else lse_sel[:, :, rows.to(lse.device)]
    reasons = compare(got_o, got_lse, ref_o, ref_lse, case.dtype)
    err = (got_o.double() - ref_o).abs().max().item()
    return {"status": "ok" if not reasons else "wrong", "reasons": reasons,
            "max_abs_error": err if math.isfinite(err) else None,
            "rows_checked": "all" if rows is None else f"{len(rows)} rows of heads {heads}"}


def argus_attention(q, k, v, causal, scale, layout, out=None, lse=None):
    from argus.ops.attention import attention_into
    return attention_into(q, k, v, causal, scale, layout, out, lse)


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def peer_call(case: Case, q, k, v, backend_name: str):
    """A zero-argument SDPA call under one backend, or (None, reason) when it refuses the
    case. SDPA takes (B, H, S, D); bshd inputs are passed as transposed views (what an
    engine does); GQA by enable_gqa, else K/V repeated outside the timed call; a causal
    mask with SQ != SK as causal_lower_right (SDPA's is_causal is top-left)."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backend = getattr(SDPBackend, backend_name)
    qh, kh, vh = (heads_first(x, case.layout) for x in (q, k, v))
    kwargs = {}
    if case.causal and case.sq != case.sk:
        from torch.nn.attention.bias import causal_lower_right
        kwargs["attn_mask"] = causal_lower_right(case.sq, case.sk)
    elif case.causal:
        kwargs["is_causal"] = True

    def attempt(kh, vh, extra):
        def call():
            with sdpa_kernel([backend]):
                return F.scaled_dot_product_attention(qh, kh, vh, **kwargs, **extra)
        call()
        torch.cuda.synchronize()
        return call

    errors = []
    if case.hq != case.hk:
        try:
            return attempt(kh, vh, {"enable_gqa": True}), None
        except Exception as exc:      # noqa: BLE001 - recorded, then the repeat is tried
            errors.append(f"enable_gqa: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
        g = case.hq // case.hk
        kh, vh = kh.repeat_interleave(g, dim=1), vh.repeat_interleave(g, dim=1)
    try:
        return attempt(kh, vh, {}), None
    except Exception as exc:          # noqa: BLE001 - a peer refusing a case is data
        errors.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
        return None, "; ".join(errors)


def time_case(case: Case, device, rounds: int = 6, reps: int = 60) -> dict:
    import torch

    from argus.bench.timing import L2Flusher, TimingConfig, alternate_rounds, EventClock

    q, k, v = make_inputs(case, 1234, device)
    scale = 1.0 / math.sqrt(case.d)
    out, lse = argus_attention(q, k, v, case.causal, scale, case.layout)
    kernels = {"argus": lambda: argus_attention(q, k, v, case.causal, scale, case.layout,
                                                out, lse)}
    refused = {}
    for name, backend in (("cudnn", "CUDNN_ATTENTION"), ("flash", "FLASH_ATTENTION")):
        fn, why = peer_call(case, q, k, v, backend)
        if fn is None:
            refused[name] = why
        else:
            kernels[name] = fn
    clock = EventClock(device)
    probe = alternate_rounds(kernels, clock, TimingConfig(warmup=3, reps=3, rounds=1))
    short = min(min(v) for v in probe.values()) < 0.05
    if short:      # launch gaps would dominate: time replays of graphs of 20 calls
        kernels = {n: _graphed(fn, 20) for n, fn in kernels.items()}
    samples = alternate_rounds(kernels, clock, TimingConfig(warmup=5, reps=reps, rounds=rounds),
                               before_each=L2Flusher(device))
    per = 20 if short else 1
    ms = {n: sorted(s)[len(s) // 2] / per for n, s in samples.items()}
    row = {"case": case.text(), **asdict(case), "flops": case.flops(), "graphs": short,
           "refused": refused}
    for n, t in ms.items():
        row[f"{n}_ms"] = t
        row[f"{n}_tflops"] = case.flops() / (t * 1e-3) / 1e12
    for peer in ("cudnn", "flash"):
        row[f"ratio_{peer}"] = ms[peer] / ms["argus"] if peer in ms else None
    return row


def _graphed(fn, calls):
    import torch

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    return graph.replay


def summarize(rows) -> dict:
    ok = [r for r in rows if r.get("status", "ok") == "ok"]
    out = {}
    for peer in ("cudnn", "flash"):
        vals = [r[f"ratio_{peer}"] for r in ok if r.get(f"ratio_{peer}")]
        out[f"geomean_ratio_{peer}"] = geomean(vals)
        out[f"min_ratio_{peer}"] = min(vals) if vals else None
    c, f = out["geomean_ratio_cudnn"], out["geomean_ratio_flash"]
    # the bar: >= 0.95 of cuDNN (none below 0.85), >= 1.6x the flash backend
    out["meets_issue"] = bool(c and f and c >= 0.95 and out["min_ratio_cudnn"] >= 0.85
                              and f >= 1.6)
    return out


def main(argv=None, prog=None) -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("--correctness", action="store_true", help="only the correctness sweep")
    p.add_argument("--timing", action="store_true", help="only the timing")
    p.add_argument("--shapes", default="", help="BxHQxHKxSQxSKxD[c][:bshd],... (default: the "
                   "issue's shapes)")
    p.add_argument("--random", type=int, default=0, metavar="N",
                   help="N shapes drawn from model families (random_cases) instead")
    p.add_argument("--seed", type=int, default=0, help="the draw's seed (--random)")
    p.add_argument("--dtypes", default="bf16", help="bf16,fp16")
    p.add_argument("--tag", default="", help="a word added to the result file's name")
    p.add_argument("--out", default="", help="the JSON file (default benchmarks/results/...)")
    args = p.parse_args(argv)
    try:
        dtypes = [d for d in args.dtypes.split(",") if d]
        for d in dtypes:
            if d not in TORCH_DTYPES:
                raise ValueError(f"dtype {d!r}: bf16 or fp16")
        given = [parse_case(s, dtypes[0]) for s in args.shapes.split(",") if s]
        if args.random < 0:
            raise ValueError(f"--random {args.random}: the number of shapes to draw, at least 1")
        if args.random:
            if given:
                raise ValueError("--random draws the shapes: give it or --shapes, not both")
            given = random_cases(args.random, args.seed)
    except ValueError as exc:
        print(f"{prog or 'argus bench attention'}: {exc}", file=sys.stderr)
        return 2
    import torch

    if not torch.cuda.is_available():
        print(f"{prog or 'argus bench attention'}: no CUDA GPU here; the DSL attention runs on "
              "Hopper only (nothing measured)", file=sys.stderr)
        return 2
    from argus.bench.results import RESULTS_DIR, environment, git_state

    both = not (args.correctness or args.timing)
    now = dt.datetime.now(dt.timezone.utc)
    out = {"date": now.isoformat(timespec="seconds"), "git": git_state(),
           "environment": environment("cuda"), "torch": torch.__version__}
    failed = 0
    if args.correctness or both:
        cases = [Case(**{**asdict(c), "dtype": d}) for d in dtypes for c in (given or CORRECTNESS)]
        if both and not given:
            cases += [Case(**{**asdict(c), "dtype": d}) for d in dtypes for c in TIMED]
        rows = []
        for i, c in enumerate(cases):
            try:
                r = check_case(c, argus_attention, 1000 + i, "cuda")
            except Exception as exc:      # noqa: BLE001 - a launch error is a failed case
                r = {"status": "error", "reasons": [f"{type(exc).__name__}: {exc}"]}
            rows.append({"case": c.text(), "dtype": c.dtype, **r})
            print(f"correctness {c.dtype} {c.text()}: {r['status']} "
                  f"{'; '.join(r['reasons'][:2])} (max err {r.get('max_abs_error')})", flush=True)
        out["correctness"] = rows
        failed += sum(r["status"] != "ok" for r in rows)
    if args.timing or both:
        rows = []
        for d in dtypes:
            for c in given or TIMED:
                c = Case(**{**asdict(c), "dtype": d})
                try:
                    r = {"status": "ok", **time_case(c, "cuda")}
                except Exception as exc:  # noqa: BLE001
                    r = {"case": c.text(), "dtype": d, "status": "error",
                         "reasons": [f"{type(exc).__name__}: {exc}"]}
                rows.append(r)
                print("timing " + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                           for k, v in r.items()
                                           if k in ("case", "dtype", "status", "argus_tflops",
                                                    "cudnn_tflops", "flash_tflops",
                                                    "ratio_cudnn", "ratio_flash", "refused",
                                                    "reasons")), flush=True)
        out["timing"] = rows
        out["summary"] = summarize(rows)
        failed += sum(r["status"] != "ok" for r in rows)
        print(f"summary {json.dumps(out['summary'])}")
    kind = "all" if both else ("correctness" if args.correctness else "timing")
    path = args.out or os.path.join(
        RESULTS_DIR, f"attention-{kind}{'-' + args.tag if args.tag else ''}-"
        f"{now.strftime('%Y%m%d-%H%M%S')}.json")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=2, default=str)
    print(f"wrote {path}; {failed} case(s) not ok")
    return 1 if failed else 0
