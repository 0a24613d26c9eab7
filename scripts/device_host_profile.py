"""Where argus.ops.matmul's host time goes per call, by function (cProfile over many calls
of a launch-bound 128^3 product, after warm-up), beside torch.matmul's time per call.
Prints the top entries by own time and by cumulative time; JSON summary to argv[1]."""

import cProfile
import io
import json
import pstats
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import argus.ops  # noqa: E402
from device_host_overhead import per_call_us  # noqa: E402  (scripts/ is sys.path[0])


def main():
    a = torch.randn(128, 128, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(128, 128, device="cuda", dtype=torch.bfloat16)
    argus.ops.matmul(a, b)
    times = {"torch.matmul": per_call_us(lambda: torch.matmul(a, b), calls=4000),
             "argus.ops.matmul": per_call_us(lambda: argus.ops.matmul(a, b), calls=4000)}
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(20000):
        argus.ops.matmul(a, b)
    prof.disable()
    torch.cuda.synchronize()
    for order in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats(order).print_stats(30)
        print(out.getvalue())
    print(times)
    Path(sys.argv[1]).write_text(json.dumps({"device": torch.cuda.get_device_name(),
                                             "per_call_us": times}, indent=1))


if __name__ == "__main__":
    main()
