"""GPU check of the MoE GEMMs with one consumer warpgroup (WG = 1, 64-slot m-tiles) against
the library's two (WG = 2) and the fp64 reference, on decode shapes and tails: the sweep
(`argus bench moe --sweep`) times the WG1 variants; this says they are right.

    python3 scripts/device_moe_wg1.py
"""

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from argus.bench.moe_bench import compare, make_inputs, poison  # noqa: E402
from argus.ops.moe import reference  # noqa: E402

op = importlib.import_module("argus.ops.moe")
original = op.config_for


def one_consumer(*args):
    cfg = original(*args)
    return {part: {**knobs, "WG": 1, "CONSUMERS": (1,)} for part, knobs in cfg.items()}


bad = 0
for t, e, k, h, i in [(1, 8, 2, 4096, 14336), (16, 8, 2, 4096, 14336), (16, 64, 6, 2048, 1408),
                      (5, 8, 2, 256, 256), (77, 8, 2, 256, 256), (64, 64, 6, 2048, 1408)]:
    x, L, w13, w2 = make_inputs(torch, t, e, k, h, i, "random", 7, "cuda")
    op.config_for = one_consumer
    poison(torch, "cuda", 4 * t * k * (h + i) * 2 + (1 << 20))   # fresh buffers read NaN
    got = op.moe(x, L, w13, w2, k)
    op.config_for = original
    lib = op.moe(x, L, w13, w2, k)
    sample = torch.arange(min(t, 64), device="cuda")
    ref = reference(x[sample], L[sample], w13, w2, k, True)
    ok, err, scale = compare(torch, got, ref, sample)
    _, lib_err, _ = compare(torch, lib, ref, sample)
    bad += not ok
    print(f"T={t} E={e} k={k} H={h} I={i}: WG1 max error {err:.3g}, WG2 {lib_err:.3g} "
          f"(|ref| {scale:.3g}) {'ok' if ok else 'WRONG'}", flush=True)
sys.exit(1 if bad else 0)
