"""The library ops as PyTorch ops (registry.register_op): `torch.ops.argus.matmul(a, b,
autotune=False)` is C = a @ b through the DSL GEMM (matmul.matmul_into), with a fake
implementation from the same operand checks and a backward through the same op:
dA = dC @ B^T (B^T as the transpose view: no copy) and dB = A^T @ dC (A^T made row-major;
when M is not a multiple of 8 both operands get zero rows up to one, which leaves the
product unchanged and keeps K a whole number of 16-byte rows)."""

from __future__ import annotations

import torch

from .matmul import check_operands, matmul_into
from .moe import check_layer, moe_into
from .registry import register_op


def _matmul(a: torch.Tensor, b: torch.Tensor, autotune: bool = False) -> torch.Tensor:
    return matmul_into(a, b, None, {}, autotune)


def _matmul_fake(a, b, autotune=False):
    m, n = check_operands(a, b)[:2]
    return a.new_empty((m, n))


def _setup(ctx, inputs, output):
    a, b, autotune = inputs
    ctx.save_for_backward(a, b)
    ctx.autotune = autotune


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad = grad.contiguous()
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = matmul_op(grad, b.t(), ctx.autotune)
    if ctx.needs_input_grad[1]:
        a_t, g = a.t().contiguous(), grad
        pad = -a.shape[0] % 8
        if pad:
            a_t = torch.nn.functional.pad(a_t, (0, pad))
            g = torch.nn.functional.pad(g, (0, 0, 0, pad))
        grad_b = matmul_op(a_t, g, ctx.autotune)
    return grad_a, grad_b, None


matmul_op = register_op("matmul", _matmul, _matmul_fake, _backward, _setup)


def _moe(x: torch.Tensor, router_logits: torch.Tensor, w13: torch.Tensor, w2: torch.Tensor,
         top_k: int, renormalize: bool = True, deterministic: bool = True) -> torch.Tensor:
    return moe_into(x, router_logits, w13, w2, top_k, renormalize, deterministic)


def _moe_fake(x, router_logits, w13, w2, top_k, renormalize=True, deterministic=True):
    t, hidden = check_layer(x, router_logits, w13, w2, top_k)[:2]
    return x.new_empty((t, hidden))


moe_op = register_op("moe", _moe, _moe_fake)
