"""Where argus.ops.moe's host time goes per call (issue 17's decode rows are host-bound:
benchmarks/results/moe-decode-diag-20261207-s28-h100.json), by function: cProfile over many
calls of a decode layer after warm-up, beside the per-call host time of the layer, of
moe_into (no dispatcher) and of torch.empty on the GPU. JSON summary to argv[1]."""

import cProfile
import importlib
import io
import json
import pstats
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from argus.bench.moe_bench import SHAPES, enqueue_us, make_inputs  # noqa: E402


def main():
    op = importlib.import_module("argus.ops.moe")
    t, e, k, h, i = SHAPES["decode-finegrained-1"]
    x, L, w13, w2 = make_inputs(torch, t, e, k, h, i, "random", 11, "cuda")
    times = {"moe": enqueue_us(torch, lambda: op.moe(x, L, w13, w2, k)),
             "moe_into": enqueue_us(torch, lambda: op.moe_into(x, L, w13, w2, k)),
             "torch.empty": enqueue_us(torch, lambda: torch.empty(6, dtype=torch.int32,
                                                             device="cuda"), 3000)}
    out, steps = op.launches(x, L, w13, w2, k)
    for name, step in steps:
        times[f"launch {name}"] = enqueue_us(torch, step, 300)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(300):
        op.moe(x, L, w13, w2, k)
    prof.disable()
    torch.cuda.synchronize()
    for order in ("tottime", "cumulative"):
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats(order).print_stats(35)
        print(s.getvalue())
    print(json.dumps(times, indent=1))
    Path(sys.argv[1]).write_text(json.dumps({"device": torch.cuda.get_device_name(),
                                             "per_call_us": times}, indent=1))


if __name__ == "__main__":
    main()
