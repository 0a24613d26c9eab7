"""Issue 17 on the H200: the gate-up GEMM's row gather with its row indices read 1, 4 or 16
at a time ahead of the TMA boxes (argus.codegen.lower.indexed.GATHER_BATCH). For each batch:
correctness of three small layers (tails, all-to-one, fine-grained) against the fp64
reference, after each launch of two Mixtral layers timed alone (moe_bench.breakdown).
    python scripts/device_moe_gather.py [--batches 1,4,16] [--out FILE]"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--batches", default="1,4,16")
    p.add_argument("--shapes", default="mixtral-512,mixtral-4096")
    p.add_argument("--out", default="moe-gather.json")
    p.add_argument("--correct", default="tails", help="CORRECTNESS case names, after the timing")
    p.add_argument("--stack-after-s", type=float, default=0,
                   help="print every thread's stack after this many seconds (a stuck run)")
    args = p.parse_args()
    if args.stack_after_s:
        import faulthandler
        faulthandler.dump_traceback_later(args.stack_after_s, repeat=True)
    import torch

    import argus.codegen.lower.indexed as indexed
    from argus.bench import moe_bench as mb
    from argus.ops import library

    rows = []
    for b in (int(x) for x in args.batches.split(",")):
        indexed.GATHER_BATCH = b
        library._built.clear()              # the next launches build with this batch
        t0 = time.time()
        row = {"gather_batch": b, "correct": [], "breakdown": []}
        for name in args.shapes.split(","):
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
