"""`argus.ops.attention(q, k, v, causal=False, scale=None, layout="bhsd", return_lse=False)`:
the flash-attention forward on Hopper with the DSL kernel (argus/kernels/attention.py).

q: (B, HQ, SQ, D) for layout "bhsd", (B, SQ, HQ, D) for "bshd" (the layout of most
inference engines); k and v: the same with HK heads and SK keys, HQ a multiple of HK
(GQA; MQA is HK = 1). D is 64 or 128; bf16 or fp16, all three of one dtype and on one CUDA
device, contiguous. `scale` defaults to 1/sqrt(D). Causal masks are aligned bottom-right
(query q keeps the keys k <= q + SK - SQ); a query row that keeps no key (causal with
SQ > SK) gives 0, and a log-sum-exp of -inf. The output has q's shape, layout and dtype;
with return_lse, also the log-sum-exp of every row, fp32 (B, HQ, SQ).

The launch is on the current stream with no host synchronisation (CUDA-graph capturable):
shapes decide the configuration (attention_configs.config_for), every scale gets its own
specialisation (built once, disk-cached). Two entries run the same code
(`attention_into`): the PyTorch op `torch.ops.argus.attention` (attention_torch.py: a
custom op with a fake implementation) and the direct call eager calls take.
"""

from __future__ import annotations

import math

from argus.runtime.launch_errors import LaunchError
from argus.runtime.modes import interpret_mode

from .attention_configs import (HEAD_DIMS, check_fits, check_knobs, config_for,
                                head_group_refusal, roles)
from .library import library_kernel
from .registry import plain_eager

DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16"}
LAYOUTS = ("bhsd", "bshd")
LOG2E = 1.4426950408889634


class Problem:
    """The sizes of one call, read off shapes and dtypes only (the fake implementation
    checks with it too)."""

    def __init__(self, b, hq, hk, sq, sk, d, dtype, layout):
        self.b, self.hq, self.hk, self.sq, self.sk, self.d = b, hq, hk, sq, sk, d
        self.dtype, self.layout = dtype, layout


def _sizes(x, layout):
    return tuple(x.shape) if layout == "bhsd" else (x.shape[0], x.shape[2], x.shape[1], x.shape[3])


def check_inputs(q, k, v, layout="bhsd", device=True) -> Problem:
    """The call's Problem, or LaunchError saying what to change; `device` adds the checks
    of real CUDA memory (alignment), which fake tensors have no address for."""
    import torch

    if layout not in LAYOUTS:
        raise LaunchError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    named = (("q", q), ("k", k), ("v", v))
    for name, x in named:
        if not isinstance(x, torch.Tensor):
            raise LaunchError(f"attention takes torch tensors; {name} is {type(x).__name__}")
        if x.dim() != 4:
            dims = "(B, H, S, D)" if layout == "bhsd" else "(B, S, H, D)"
            raise LaunchError(f"{name} must be 4-D {dims} for layout {layout!r}, got "
                              f"{x.dim()}-D {tuple(x.shape)}")
    dtype = DTYPES.get(str(q.dtype)) if q.dtype == k.dtype == v.dtype else None
    if dtype is None:
        raise LaunchError(f"attention takes bf16 or fp16 q, k, v of one dtype, got {q.dtype}, "
                          f"{k.dtype} and {v.dtype}")
    b, hq, sq, d = _sizes(q, layout)
    bk, hk, sk, dk = _sizes(k, layout)
    if tuple(k.shape) != tuple(v.shape):
        raise LaunchError(f"k and v must have one shape, got {tuple(k.shape)} and "
                          f"{tuple(v.shape)}")
    if bk != b:
        raise LaunchError(f"q and k must have the same batch, got {b} and {bk}")
    if dk != d:
        raise LaunchError(f"q and k must have the same head dim, got {d} and {dk}")
    if d not in HEAD_DIMS:
        raise LaunchError(f"head dim {d} is not supported; the kernel takes "
                          f"{' or '.join(map(str, HEAD_DIMS))} (pad the head dim with zeros)")
    if hk == 0 or hq % hk:
        raise LaunchError(f"the query heads ({hq}) must be a multiple of the key/value heads "
                          f"({hk}) (GQA/MQA)")
    if min(b, hq, sq, sk) == 0:
        raise LaunchError(f"empty attention: q {tuple(q.shape)}, k {tuple(k.shape)}")
    if sq * b * hq >= 2 ** 31 or sk * b * hk >= 2 ** 31:
        raise LaunchError("attention takes fewer than 2^31 rows of q and of k (B*H*S)")
    if b * hq > 65535 and layout == "bhsd":
        raise LaunchError(f"B * HQ = {b * hq} is over the 65535 blocks of a grid axis")
    if len({x.device for _, x in named}) != 1:
        raise LaunchError(f"q, k and v must be on one device, got "
                          f"{', '.join(str(x.device) for _, x in named)}")
    for name, x in named:
        if not x.is_contiguous():
            raise LaunchError(f"{name} must be contiguous in layout {layout!r} (strides "
                              f"{x.stride()}); call .contiguous()")
        if device and x.device.type == "cuda" and x.data_ptr() % 16:
            raise LaunchError(f"{name}'s data must be 16-byte aligned for TMA (address "
                              f"{x.data_ptr():#x}); call .clone()")
    return Problem(b, hq, hk, sq, sk, d, dtype, layout)


def output_shapes(p: Problem):
    o = (p.b, p.hq, p.sq, p.d) if p.layout == "bhsd" else (p.b, p.sq, p.hq, p.d)
    return o, (p.b, p.hq, p.sq)


def attention(q, k, v, causal=False, scale=None, layout="bhsd", return_lse=False, out=None):
    """O = softmax(scale q k^T) v (see the module's docstring); (O, lse) with return_lse.
    `out` (q's shape and dtype, contiguous) receives O when given."""
    import torch

    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor):
            raise LaunchError(f"attention takes torch tensors; {name} is {type(x).__name__}")
    scale = _scale(q, scale)
    if out is not None or plain_eager(q, k, v):
        o, lse = attention_into(q, k, v, bool(causal), scale, layout, out)
    else:
        o, lse = torch.ops.argus.attention(q, k, v, bool(causal), scale, layout)
    return (o, lse) if return_lse else o


def _scale(q, scale):
    if scale is None:
        if getattr(q, "dim", lambda: 0)() != 4:
            return 1.0       # the shape check reports the rank
        return 1.0 / math.sqrt(q.shape[-1])
    scale = float(scale)
    if not math.isfinite(scale) or scale <= 0:
        raise LaunchError(f"scale must be a positive finite number, got {scale}")
    return scale


def plan(p: Problem, causal: bool, scale: float, sk_run: int, sq_run: int, knobs=None,
         gpu: str = "interpreter"):
    """The launcher of the call's specialisation: the shape's defaults (config_for), under
    the tuned cache's entry for `gpu` (attention_tuned.py; not while ARGUS_ATTENTION_CONFIG
    is set), under the call's explicit `knobs`."""
    cfg = config_for(p.d, causal, sq_run, sk_run, p.layout, p.b * p.hq)
    if knobs is None:
        knobs = _tuned(p, causal, gpu)
    if knobs:
        cfg.update(check_knobs(knobs))
    check_fits(cfg, p.d, causal)
    why = head_group_refusal(cfg, p.layout, p.b * p.hq)
    if why:
        raise LaunchError(why)
    cfg.update(roles(cfg.get("WGS", 2), cfg.get("BLOCKS_PER_SM", 1)))
    name = f"attention_{p.layout}"
    return library_kernel("attention", name, DT=p.dtype, HD=p.d, G=p.hq // p.hk,
                          CAUSAL=int(causal), SCALE_LOG2=scale * LOG2E, **cfg)


def _tuned(p: Problem, causal: bool, gpu: str):
    import os

    from . import attention_tuned

    if os.environ.get("ARGUS_ATTENTION_CONFIG"):
        return None
    return attention_tuned.tuned_for(gpu, p.dtype, p.layout, p.b, p.hq, p.hk, p.sq, p.sk, p.d,
                                     causal)


def _gpu_name(x) -> str:
    from .autotune import device_name
    return device_name(x)


def _destination(x, shape, dtype, device, name):
    import torch

    if x is None:
        return torch.empty(shape, dtype=dtype, device=device)
    if tuple(x.shape) != tuple(shape) or x.dtype != dtype or not x.is_contiguous() or \
            x.device != device:
        raise LaunchError(f"{name} must be a contiguous {tuple(shape)} {dtype} tensor on "
                          f"{device}, got {tuple(x.shape)} {x.dtype} on {x.device}")
    return x


def attention_into(q, k, v, causal: bool, scale: float, layout: str, out=None, lse=None,
                   knobs=None):
    """The computation behind both entries: checks, plan, launch; (O, lse), written into
    `out` and `lse` when given (the benchmark poisons them first). `knobs` (attention.py's
    module constants, e.g. {"BN": 64, "S": 3}) replace the planned configuration's: the
    planner's evaluator runs candidates so."""
    import torch

    p = check_inputs(q, k, v, layout)
    if q.device.type != "cuda" and interpret_mode() is None:
        raise LaunchError(f"attention runs on a CUDA device (q is on {q.device}); move the "
                          "tensors with .cuda(), or set ARGUS_INTERPRET=1 for the CPU "
                          "interpreter")
    o_shape, lse_shape = output_shapes(p)
    out = _destination(out, o_shape, q.dtype, q.device, "out")
    lse = _destination(lse, lse_shape, torch.float32, q.device, "lse")
    if causal and p.sq > p.sk:
        # bottom-right: the first SQ - SK query rows keep no key (0, lse -inf); the others
        # are the square causal problem of the last SK rows
        skip = p.sq - p.sk
        axis = 2 if layout == "bhsd" else 1
        out.narrow(axis, 0, skip).zero_()
        lse[:, :, :skip] = -math.inf
        o_run, lse_run = attention_into(q.narrow(axis, skip, p.sk).contiguous(), k, v, causal,
                                        scale, layout, knobs=knobs)
        out.narrow(axis, skip, p.sk).copy_(o_run)
        lse[:, :, skip:].copy_(lse_run)
        return out, lse
    launcher = plan(p, causal, scale, p.sk, p.sq, knobs, _gpu_name(q))
    if layout == "bhsd":
        flat = (q.view(-1, p.d), k.view(-1, p.d), v.view(-1, p.d), out.view(-1, p.d))
    else:
        flat = (q.view(p.b * p.sq, p.hq * p.d), k.view(p.b * p.sk, p.hk * p.d),
                v.view(p.b * p.sk, p.hk * p.d), out.view(p.b * p.sq, p.hq * p.d))
    launcher(*flat, lse.view(-1), p.sq, p.sk)
    return out, lse
