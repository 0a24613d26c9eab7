"""Batched `argus.ops.matmul`, with torch.matmul's rules: a (..., M, K) @ b (..., K, N), the
batch dimensions broadcast against each other; a 1-D operand is refused (unsqueeze it).

When b is one matrix and a's batch rows can be viewed as one (B * M) x K matrix without a
copy, the whole batch is one GEMM. Otherwise each batch element is one GEMM on views of
the operands (`a[i]`, `b[i]`: no copies), written into its slice of one output; under
autograd or torch.compile each element goes through the PyTorch op and the results are
stacked, so the backward and the graph see only registered ops."""

from __future__ import annotations

import itertools

from argus.runtime.launch_errors import LaunchError


def batched_matmul(a, b, out, autotune, knobs: dict, *, plain_eager: bool, matmul, matmul_into):
    """`matmul` (a, b, autotune=) -> c and `matmul_into` (a, b, out, knobs, autotune) -> out
    are the 2-D entry points of matmul.py, passed in so that this module does not import it
    back; `plain_eager` says the call may skip the registered op."""
    import torch

    if a.dim() < 2 or b.dim() < 2:
        raise LaunchError(f"matmul takes operands of 2 or more dimensions, got {a.dim()}-D and "
                          f"{b.dim()}-D; unsqueeze a vector into a 1-row or 1-column matrix")
    m, k = a.shape[-2:]
    if b.shape[-2] != k:
        raise LaunchError(f"shapes do not chain: a is {tuple(a.shape)}, b is {tuple(b.shape)} "
                          "(a's last dimension must equal b's second to last)")
    n = b.shape[-1]
    try:
        batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except RuntimeError:
        raise LaunchError(f"batch dimensions do not broadcast: a is {tuple(a.shape)}, b is "
                          f"{tuple(b.shape)}") from None
    shape = tuple(batch) + (m, n)
    if out is not None and (tuple(out.shape) != shape or not out.is_contiguous()
                            or out.dtype != a.dtype):
        raise LaunchError(f"out must be a contiguous {' x '.join(map(str, shape))} {a.dtype} "
                          "tensor")
    eager = plain_eager or knobs or out is not None
    if b.dim() == 2:
        flat = _flat_rows(a)
        if flat is not None:              # one GEMM over every batch row
            if eager:
                dest = out.view(-1, n) if out is not None else None
                return matmul_into(flat, b, dest, knobs, autotune).view(shape)
            return matmul(flat, b, autotune=autotune).view(shape)
    a_b = a.expand(tuple(batch) + (m, k))
    b_b = b.expand(tuple(batch) + (k, n))
    indices = list(itertools.product(*(range(d) for d in batch)))
    if not indices:
        raise LaunchError(f"an empty batch (batch shape {tuple(batch)}): nothing to multiply")
    if not eager:                         # autograd / torch.compile: the registered op
        parts = [matmul(a_b[i], b_b[i], autotune=autotune) for i in indices]
        return torch.stack(parts).view(shape)
    if out is None:
        out = torch.empty(shape, dtype=a.dtype, device=a.device)
    for i in indices:
        matmul_into(a_b[i], b_b[i], out[i], knobs, autotune)
    return out


def _flat_rows(a):
    """a (..., M, K) as one (B * M) x K view when its rows are evenly spaced, else None."""
    rows = a.reshape(-1, a.shape[-1]) if a.is_contiguous() else None
    if rows is None:
        try:
            rows = a.view(-1, a.shape[-1])
        except RuntimeError:
            return None
    return rows
