"""`argus.ops.matmul(a, b)`: C = a @ b on Hopper with the DSL GEMM (argus/kernels/gemm.py).

a: M x K, row-major. b: K x N row-major (`x @ W`), or the transpose view of an N x K
row-major tensor (`x @ W.T`, what `W.t()` gives), which runs the N x K kernel without a
copy. bf16 or fp16 (both operands the same), fp32 accumulation, the output in the input
dtype. K and N must be multiples of 8 (16-byte TMA row strides). Each shape gets the
configuration `config_for` picks, unless knobs (argus.agent's names: BN, BK, stages,
group, epilogue, split_k, ...) ask for another; knobs the kernels do not support are
refused by name. split_k > 1 runs argus/kernels/gemm_splitk.py into an fp32 workspace and
rounds it into the output.
"""

from __future__ import annotations

import os
from functools import lru_cache

from argus.runtime.launch_errors import LaunchError

from .gemm_configs import config_for, knobs_to_config
from .library import library_kernel

DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16"}


def _layout_of_b(b):
    """("kn", tensor) for a row-major K x N b; ("nk", b.T) for the transpose of an N x K one."""
    if b.is_contiguous():
        return "kn", b
    if b.t().is_contiguous():
        return "nk", b.t()
    raise LaunchError(f"b must be row-major K x N or the transpose of a row-major N x K tensor "
                      f"(strides {b.stride()}); call .contiguous()")


@lru_cache(maxsize=256)
def _plan(layout, m, n, k, dtype, knobs, override, tuned, debug, interpret):
    """(launcher, split-K?) of a call, worked out once per (shape, dtype, knobs,
    environment): the tuned-table lookup, the knob checks and the kernel lookup stay off the
    per-call path."""
    del override, tuned, debug, interpret   # part of the key: they change what is read below
    cfg = knobs_to_config(dict(knobs), layout, m, n, k) if knobs else \
        config_for(m, n, k, layout)
    name = "gemm_nn" if layout == "kn" else "gemm_nt"
    if cfg.get("SPLIT"):
        cfg.pop("GROUP", None)
        return library_kernel("gemm_splitk", name + "_splitk", DT=dtype, **cfg), True
    return library_kernel("gemm", name, DT=dtype, **cfg), False


def matmul(a, b, out=None, **knobs):
    import torch

    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        raise LaunchError("matmul takes two torch tensors")
    if a.dim() != 2 or b.dim() != 2:
        raise LaunchError(f"matmul takes 2-D tensors, got {a.dim()}-D and {b.dim()}-D")
    if a.shape[1] != b.shape[0]:
        raise LaunchError(f"shapes do not chain: a is {tuple(a.shape)}, b is {tuple(b.shape)} "
                          "(a's columns must equal b's rows)")
    dtype = DTYPES.get(str(a.dtype)) if a.dtype == b.dtype else None
    if dtype is None:
        raise LaunchError(f"matmul takes bf16 or fp16 operands of one dtype, got {a.dtype} and "
                          f"{b.dtype}")
    if not a.is_contiguous():
        raise LaunchError(f"a must be row-major (strides {a.stride()}); call .contiguous()")
    m, k = a.shape
    n = b.shape[1]
    if k % 8 or n % 8:
        raise LaunchError(f"K = {k} and N = {n} must be multiples of 8 (TMA needs 16-byte row "
                          "strides); pad them with zeros")
    layout, b_stored = _layout_of_b(b)
    if out is None:
        out = torch.empty((m, n), dtype=a.dtype, device=a.device)
    elif out.shape != (m, n) or out.dtype != a.dtype or not out.is_contiguous():
        raise LaunchError(f"out must be a contiguous {m} x {n} {a.dtype} tensor")
    env = os.environ
    launcher, split = _plan(layout, m, n, k, dtype, tuple(sorted(knobs.items())),
                            env.get("ARGUS_GEMM_CONFIG"), env.get("ARGUS_GEMM_TUNED"),
                            env.get("ARGUS_DEBUG"), env.get("ARGUS_INTERPRET"))
    if split:
        # partial sums of the K ranges meet in an fp32 workspace, then round into `out`
        workspace = torch.zeros((m, n), dtype=torch.float32, device=a.device)
        launcher(a, b_stored, workspace)
        out.copy_(workspace)
        return out
    launcher(a, b_stored, out)
    return out
