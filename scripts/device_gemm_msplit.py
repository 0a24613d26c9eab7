"""Does splitting M help the mid-sized GEMMs that quantise badly into waves? For each
shape: argus.ops.matmul whole, and as two calls on row slices (A[:m1] @ B -> C[:m1], then
the rest) for several m1, against torch.matmul, all timed in the same run (CUDA events,
median of 20 after warm-up, L2 not flushed: both parts read B, the second may hit L2)."""

import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import argus.ops  # noqa: E402

SHAPES = [(1413, 4008, 4456), (1190, 3584, 4096), (777, 5136, 1056), (4590, 3072, 8192),
          (512, 5120, 5120), (5636, 5504, 2088)]


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(50_000)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) * 1e3)
    out.sort()
    return out[len(out) // 2]


def main():
    rows = []
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        ref = torch.matmul(a, b)
        row = {"shape": f"{m}x{n}x{k}", "torch_us": timed(lambda: torch.matmul(a, b)),
               "argus_us": timed(lambda: argus.ops.matmul(a, b, out=c))}
        splits = {}
        for m1 in sorted({x for x in range(128, m, 128)} | {m // 2 // 64 * 64}):
            if m1 <= 0 or m1 >= m:
                continue

            def two():
                argus.ops.matmul(a[:m1], b, out=c[:m1])
                argus.ops.matmul(a[m1:], b, out=c[m1:])
            c.fill_(float("nan"))
            two()
            err = (c.float() - ref.float()).abs().max().item()
            splits[m1] = (timed(two), err)
        best = min(splits.items(), key=lambda kv: kv[1][0])
        row["best_split"] = {"m1": best[0], "us": best[1][0], "max_err": best[1][1]}
        row["ratio_whole"] = row["torch_us"] / row["argus_us"]
        row["ratio_split"] = row["torch_us"] / best[1][0]
        row["splits_us"] = {str(k): v[0] for k, v in splits.items()}
        print(json.dumps({k: v for k, v in row.items() if k != "splits_us"}), flush=True)
        rows.append(row)
    Path(sys.argv[1]).write_text(json.dumps({"device": torch.cuda.get_device_name(),
                                             "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
