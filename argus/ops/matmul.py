"""`argus.ops.matmul(a, b)`: C = a @ b on Hopper with the DSL GEMM (argus/kernels/gemm.py).

a: M x K, row-major. b: K x N row-major (`x @ W`), or the transpose view of an N x K
row-major tensor (`x @ W.T`, what `W.t()` gives), which runs the N x K kernel without a
copy. bf16 or fp16 (both operands the same), fp32 accumulation, the output in the input
dtype. K and N must be multiples of 8 (16-byte TMA row strides). Each shape gets the
configuration `config_for` picks, unless knobs (argus.agent's names: BN, BK, stages,
group, epilogue, split_k, ...) ask for another; knobs the kernels do not support are
refused by name. split_k > 1 runs argus/kernels/gemm_splitk.py into an fp32 workspace and
rounds it into the output.

Two entries run the same code (`matmul_into`): the PyTorch op `torch.ops.argus.matmul`
(torch_ops.py: a custom op with a fake implementation and a backward, what torch.compile
traces and autograd differentiates), and the direct call, which eager calls without grad
take, since the dispatcher's custom-op path costs host time per call; `out=` and knobs
always take the direct call (destination passing for the harness, no autograd).
`autotune=True` (or ARGUS_AUTOTUNE=1) times the candidate configurations of the shape's
class on its first call and keeps the fastest in the on-disk cache (autotune.py), which
`argus optimize` writes too; a cached winner is used with or without autotuning. A
prediction `argus optimize` made on the CPU cost model (basis "predicted") is taken only for
a shape the tuned table does not hold, in place of the heuristic.
"""

from __future__ import annotations

import os
from functools import lru_cache

from argus.runtime.launch_errors import LaunchError

from .autotune import candidates, capturing, current_cache, device_name, tune
from .autotune import enabled as autotune_enabled
from .gemm_configs import config_for, knobs_to_config, tuned_knobs
from .library import library_kernel
from .tune_cache import entry_key

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


def check_operands(a, b):
    """(M, N, K, B layout, B as stored) of a @ b, or LaunchError saying what to change.
    Reads only shapes, dtypes and strides, so the fake implementation (torch_ops.py) checks
    with it too."""
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
    return (m, n, k) + _layout_of_b(b)


def matmul(a, b, out=None, autotune=None, **knobs):
    """C = a @ b (see the module's docstring); `out` receives it when given."""
    import torch

    if out is None and not knobs and not _plain_eager(torch, a, b):
        return torch.ops.argus.matmul(a, b, bool(autotune))
    return matmul_into(a, b, out, knobs, autotune)


def _plain_eager(torch, a, b) -> bool:
    """An eager call on real tensors that autograd does not record: the op's dispatch would
    only add host time."""
    if type(a) is not torch.Tensor or type(b) is not torch.Tensor or a.is_meta or b.is_meta:
        return False
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        return False
    return not torch.compiler.is_compiling()


def matmul_into(a, b, out, knobs: dict, autotune=None):
    """The computation behind both entries: checks, plan (cached per shape), launch."""
    import torch

    m, n, k, layout, b_stored = check_operands(a, b)
    dtype = DTYPES[str(a.dtype)]
    if out is None:
        out = torch.empty((m, n), dtype=a.dtype, device=a.device)
    elif out.shape != (m, n) or out.dtype != a.dtype or not out.is_contiguous():
        raise LaunchError(f"out must be a contiguous {m} x {n} {a.dtype} tensor")
    if knobs:
        launcher, split = plan(layout, m, n, k, dtype, knobs)
    else:
        launcher, split = _tuned_plan(a, b_stored, out, layout, dtype, m, n, k, autotune)
    run_plan(launcher, split, a, b_stored, out)
    return out


def plan(layout, m, n, k, dtype, knobs: dict):
    env = os.environ
    return _plan(layout, m, n, k, dtype, tuple(sorted(knobs.items())),
                 env.get("ARGUS_GEMM_CONFIG"), env.get("ARGUS_GEMM_TUNED"),
                 env.get("ARGUS_DEBUG"), env.get("ARGUS_INTERPRET"))


_chosen: dict[tuple, tuple] = {}     # a call's shape and switches -> its plan


def _tuned_plan(a, b_stored, out, layout, dtype, m, n, k, autotune):
    """The plan of a call without knobs, worked out once per shape, device and switches
    (what a call costs on the host matters): see _choose."""
    env = os.environ
    key = (layout, m, n, k, dtype, out.device, autotune, env.get("ARGUS_AUTOTUNE"),
           env.get("ARGUS_CACHE_DIR"), env.get("ARGUS_GEMM_CONFIG"),
           env.get("ARGUS_GEMM_TUNED"), env.get("ARGUS_DEBUG"), env.get("ARGUS_INTERPRET"))
    chosen = _chosen.get(key)
    if chosen is None:
        chosen, final = _choose(a, b_stored, out, layout, dtype, m, n, k, autotune)
        if final:
            _chosen[key] = chosen
    return chosen


def _choose(a, b_stored, out, layout, dtype, m, n, k, autotune):
    """(plan, final): the cache's configuration of the shape class when it has one (and it
    still fits this shape), else a tuning run's winner when autotuning, else the tuned
    table's or the heuristic's; not final when tuning waits for a call outside a CUDA
    graph capture."""
    key = entry_key(device_name(out), dtype, layout, m, n, k)
    cache = current_cache()
    cached = cache.knobs(key)
    if cached is not None:
        try:
            return plan(layout, m, n, k, dtype, cached), True
        except LaunchError:      # a configuration the kernels no longer accept: ignored
            pass
    elif autotune_enabled(autotune):
        if capturing(out):
            return plan(layout, m, n, k, dtype, {}), False

        def run(knobs):
            run_plan(*plan(layout, m, n, k, dtype, knobs), a, b_stored, out)

        best, ms, _ = tune(candidates(m, n, k, layout), run)
        cache.record(key, best, ms, "autotune")
        _chosen.clear()          # calls of this class planned before now read the entry
        return plan(layout, m, n, k, dtype, best), True
    predicted = cache.predicted(key)
    if predicted is not None and tuned_knobs(m, n, k, layout) is None:
        try:                     # the cost model's choice, where only the heuristic would be
            return plan(layout, m, n, k, dtype, predicted), True
        except LaunchError:
            pass
    return plan(layout, m, n, k, dtype, {}), True


def run_plan(launcher, split, a, b_stored, out) -> None:
    """One launch of a planned kernel into `out` (split-K: through an fp32 workspace)."""
    import torch

    if split:
        # partial sums of the K ranges meet in an fp32 workspace, then round into `out`
        workspace = torch.zeros(out.shape, dtype=torch.float32, device=out.device)
        launcher(a, b_stored, workspace)
        out.copy_(workspace)
    else:
        launcher(a, b_stored, out)
