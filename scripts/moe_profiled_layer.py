"""One MoE layer call inside an NVTX range "decode" after three warm-up calls, for Nsight
Compute (`ncu --nvtx --nvtx-include decode/`): the device scripts' profiled program.
    python3 scripts/moe_profiled_layer.py [SHAPE]   (a name of argus.bench.moe_bench.SHAPES;
                                                     default decode-finegrained-1)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402

import argus.ops as ops  # noqa: E402
from argus.bench.moe_bench import SHAPES, make_inputs  # noqa: E402

t, e, k, h, i = SHAPES[sys.argv[1] if len(sys.argv) > 1 else "decode-finegrained-1"]
x, L, w13, w2 = make_inputs(torch, t, e, k, h, i, "random", 11, "cuda")
for _ in range(3):
    ops.moe(x, L, w13, w2, k)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("decode")
ops.moe(x, L, w13, w2, k)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
