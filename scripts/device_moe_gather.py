"""Issue 17 on the H200: the gate-up GEMM's row gather as the codegen emits it now: each launch
of the named layers timed alone (moe_bench.breakdown), then correctness of the named small
layers against the fp64 reference. (The tenth session's comparison of index batches 1 and 16,
benchmarks/results/moe-gather-20261204.json, ran an earlier form of this script.)
    python scripts/device_moe_gather.py [--shapes mixtral-512] [--correct tails] [--out FILE]"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default="mixtral-512,mixtral-4096")
    p.add_argument("--out", default="moe-gather.json")
    p.add_argument("--one-by-one", default="",
                   help="CORRECTNESS case names: run their layers launch by launch, each "
                        "synchronised and named first (which kernel of a layer never ends)")
    p.add_argument("--correct", default="tails", help="CORRECTNESS case names, after the timing")
    p.add_argument("--stack-after-s", type=float, default=0,
                   help="print every thread's stack after this many seconds (a stuck run)")
    args = p.parse_args()
    if args.stack_after_s:
        import faulthandler
        faulthandler.dump_traceback_later(args.stack_after_s, repeat=True)
    import torch

    from argus.bench import moe_bench as mb

    for case in mb.CORRECTNESS:
        if case[0] in args.one_by_one.split(","):
            from argus.ops.moe import launches
            _, t, e, k, h, i, logits = case
            x, L, w13, w2 = mb.make_inputs(torch, t, e, k, h, i, logits, 5, "cuda")
            _, steps = launches(x, L, w13, w2, k)
            for name, step in steps:
                print(f"{case[0]}: launching {name}", flush=True)
                t1 = time.time()
                step()
                torch.cuda.synchronize()
                print(f"{case[0]}: {name} done in {time.time() - t1:.3f} s", flush=True)
    rows = []
    for b in ("current",):
        t0 = time.time()
        row = {"gather_batch": b, "correct": [], "breakdown": []}
        for name in filter(None, args.shapes.split(",")):
            print(f"batch {b}: {name} ({time.time() - t0:.0f} s)", flush=True)
            row["breakdown"].append(mb.breakdown(torch, name, *mb.SHAPES[name]))
        for case in mb.CORRECTNESS:
            if case[0] in args.correct.split(","):
                print(f"batch {b}: correctness {case[0]} ({time.time() - t0:.0f} s)", flush=True)
                row["correct"].append(mb.check_case(torch, *case, seed=5, device="cuda"))
        row["seconds"] = time.time() - t0
        rows.append(row)
        print(json.dumps({"gather_batch": b, "ok": [c["ok"] for c in row["correct"]],
                          "gate_up_ms": [r["ms"]["gate_up"] for r in row["breakdown"]],
                          "gate_up_tflops": [r["gemm_tflops"]["gate_up"]
                                             for r in row["breakdown"]],
                          "seconds": row["seconds"]}), flush=True)
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
