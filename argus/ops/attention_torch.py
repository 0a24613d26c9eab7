"""argus.ops.attention as a PyTorch op (registry.register_op): `torch.ops.argus.attention(q,
k, v, causal, scale, layout)` returns (O, lse) through the DSL kernel
(attention.attention_into), with a fake implementation from the same input checks (what
FakeTensorMode, meta tensors and torch.compile's tracing run). No backward yet."""

from __future__ import annotations

import torch

from .attention import attention_into, check_inputs, output_shapes
from .registry import register_op


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, scale: float,
               layout: str) -> tuple[torch.Tensor, torch.Tensor]:
    return attention_into(q, k, v, causal, scale, layout)


def _attention_fake(q, k, v, causal, scale, layout):
    p = check_inputs(q, k, v, layout, device=False)
    o_shape, lse_shape = output_shapes(p)
    return q.new_empty(o_shape), q.new_empty(lse_shape, dtype=torch.float32)


attention_op = register_op("attention", _attention, _attention_fake)
