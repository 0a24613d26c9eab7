"""Inputs and reference outputs for targets whose kernel file's `reference` is not the
kernel's own signature (argus.cli.run_reference calls it with the kernel's tensors): the
library attention, whose kernels take flattened (rows, HD) views and size arguments SQ, SK
while its reference takes (B, H, S, D) arrays. Named by Target.problem."""

from __future__ import annotations

import numpy as np

from argus.interp.machine.rounding import round_to_bf16

LOG2E = 1.4426950408889634


def attention(target, seed: int, shapes: dict):
    """B, HQ, HK, SQ, SK from `shapes`; HD, CAUSAL and the scale from the target's
    specialisation. Q, K, V random bf16 (rounded), O and L poisoned with NaN; the expected
    O (bf16 compare) and L (fp32 compare, relative to the largest |L|) from the file's
    float64 reference."""
    from argus.kernels.attention import reference
    from tools.mutation.runner import Problem

    ov = target.overrides
    b, hq, hk, sq, sk = (shapes[n] for n in ("B", "HQ", "HK", "SQ", "SK"))
    d, causal = ov["HD"], bool(ov.get("CAUSAL", 0))
    scale = ov["SCALE_LOG2"] / LOG2E
    rng = np.random.default_rng(seed)
    q, k, v = (round_to_bf16(rng.standard_normal((b, h, s, d)).astype(np.float32))
               for h, s in ((hq, sq), (hk, sk), (hk, sk)))
    o, lse = reference(q, k, v, causal, scale)
    bshd = target.kernel.endswith("bshd")

    def flat(x):
        if bshd:
            return np.ascontiguousarray(x.transpose(0, 2, 1, 3).reshape(x.shape[0] * x.shape[2], -1))
        return np.ascontiguousarray(x.reshape(-1, x.shape[-1]))

    Q, K, V, O = (flat(x) for x in (q, k, v, o))
    arrays = {"Q": Q, "K": K, "V": V, "O": np.full(Q.shape, np.nan, np.float32),
              "L": np.full(b * hq * sq, np.nan, np.float32), "SQ": sq, "SK": sk}
    return Problem(arrays, {"O": O, "L": lse.reshape(-1)}, [("O", "bf16"), ("L", "fp32")])
