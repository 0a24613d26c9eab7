"""`argus.ops.matmul(a, b)`: C = a @ b on Hopper with the DSL GEMM (argus/kernels/gemm.py).

a: M x K, rows contiguous. b: K x N (`x @ W`), or the transpose view of an N x K tensor
(`x @ W.T`, what `W.t()` gives), which runs the N x K kernel without a copy. Views whose
rows lie a multiple of 16 bytes apart (column slices of a wider tensor) are read in place
(TMA takes the pitch). bf16 or fp16 (both operands the same), fp32 accumulation, the
output in the input dtype. K or N not a multiple of 8: the operands are copied into
zero-padded buffers first (`_padded`); operands whose rows start off the 128-byte grid
run as given, the configuration model pricing their slower fill (copying them onto the
grid first was measured on an H100 to gain nothing and to lose 10-18% on large products,
docs/perf-log.md, 2026-12-06). Batched operands (3-D and more, broadcast like
torch.matmul): batches.py. Each shape gets the
configuration `config_for` picks, unless knobs (argus.agent's names: BN, BK, stages,
group, epilogue, split_k, ...) ask for another; knobs the kernels do not support are
refused by name. split_k > 1 runs argus/kernels/gemm_splitk.py into an fp32 workspace kept
all zeros between calls (workspace.py) and rounds it into the output, clearing it.

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

from functools import lru_cache

from argus.runtime import environment
from argus.runtime.launch_errors import LaunchError

from .autotune import candidates, capturing, current_cache, device_name, tune
from .autotune import enabled as autotune_enabled
from .gemm_configs import config_for, knobs_to_config, tuned_knobs
from .gemm_model import PITCH_BYTES
from .library import library_kernel
from .registry import plain_eager
from .tune_cache import entry_key
from .workspace import zeroed_workspace

# what a plan depends on besides the call: the kernel's constants and mode ...
KERNEL_ENV = ("ARGUS_GEMM_CONFIG", "ARGUS_GEMM_TUNED", "ARGUS_DEBUG", "ARGUS_INTERPRET")
# ... and the choice of configuration
PLAN_ENV = ("ARGUS_AUTOTUNE", "ARGUS_CACHE_DIR") + KERNEL_ENV
_plan_env = environment.reader(PLAN_ENV)


_DTYPE_NAMES: dict = {}    # torch dtype -> "bf16" / "fp16" (filled on first use)


def _dtype_name(torch, t):
    if not _DTYPE_NAMES:
        _DTYPE_NAMES.update({torch.bfloat16: "bf16", torch.float16: "fp16"})
    return _DTYPE_NAMES.get(t.dtype)


def _contiguous(shape, stride) -> bool:
    """torch's is_contiguous of a 2-D tensor, from its shape and strides (read once)."""
    if 0 in shape:
        return True
    return (shape[1] == 1 or stride[1] == 1) and (shape[0] == 1 or stride[0] == shape[1])


def _rows_ok(shape, stride) -> bool:
    """Rows of contiguous elements whose pitch TMA can take: a contiguous tensor, or a view
    with unit column stride and a row pitch of a whole number of 16-byte units (8 elements
    of bf16/fp16)."""
    if stride[1] != 1 and shape[1] > 1:
        return False
    return _contiguous(shape, stride) or (stride[0] >= shape[1] and stride[0] % 8 == 0)


def _layout_of_b(shape, stride):
    """("kn", its row pitch) for a K x N b with rows TMA can read; ("nk", the row pitch of
    b.T) for the transpose view of such an N x K one (what `W.t()` gives)."""
    if _rows_ok(shape, stride):
        return "kn", stride[0]
    if _rows_ok(shape[::-1], stride[::-1]):
        return "nk", stride[1]
    raise LaunchError(f"b must be K x N with contiguous rows or the transpose of such an N x K "
                      f"tensor, rows a multiple of 16 bytes apart (strides {tuple(stride)}); "
                      "call .contiguous()")


@lru_cache(maxsize=256)
def _plan(layout, m, n, k, dtype, knobs, override, tuned, debug, interpret):
    """(launcher, rounder) of a call, worked out once per (shape, dtype, knobs,
    environment): the tuned-table lookup, the knob checks and the kernel lookup stay off the
    per-call path. `rounder` is None, or for split-K the kernel that rounds the fp32
    workspace into the output and clears it (gemm_splitk.splitk_round)."""
    del override, tuned, debug, interpret   # part of the key: they change what is read below
    cfg = knobs_to_config(dict(knobs), layout, m, n, k) if knobs else \
        config_for(m, n, k, layout)
    name = "gemm_nn" if layout == "kn" else "gemm_nt"
    if cfg.get("SPLIT"):
        cfg.pop("GROUP", None)
        return (library_kernel("gemm_splitk", name + "_splitk", DT=dtype, **cfg),
                library_kernel("gemm_splitk", "splitk_round", DT=dtype))
    return library_kernel("gemm", name, DT=dtype, **cfg), None


def check_operands(a, b):
    """(M, N, K, B layout, B as stored) of a @ b, or LaunchError saying what to change.
    Reads only shapes, dtypes and strides, so the fake implementation (torch_ops.py) checks
    with it too."""
    m, n, k, layout, dtype, a_pitch, b_pitch = _operands(a, b)
    return m, n, k, layout, (b if layout == "kn" else b.t())


def _operands(a, b):
    """(M, N, K, B layout, dtype name, A's row pitch, B's stored row pitch) of a @ b, each
    shape and stride read once and the common case tested inline (host time per call:
    issue 18), or LaunchError."""
    import torch

    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
        raise LaunchError("matmul takes two torch tensors")
    sa, sb = a.shape, b.shape
    if len(sa) != 2 or len(sb) != 2:
        raise LaunchError(f"matmul_into takes 2-D tensors, got {len(sa)}-D and {len(sb)}-D "
                          "(argus.ops.matmul takes batches)")
    m, k = sa
    k2, n = sb
    if k != k2:
        raise LaunchError(f"shapes do not chain: a is {tuple(sa)}, b is {tuple(sb)} "
                          "(a's columns must equal b's rows)")
    dtype = _dtype_name(torch, a) if a.dtype == b.dtype else None
    if dtype is None:
        raise LaunchError(f"matmul takes bf16 or fp16 operands of one dtype, got {a.dtype} and "
                          f"{b.dtype}")
    ta, tb = a.stride(), b.stride()
    # the common cases inline: a contiguous, b contiguous K x N or the transpose of a
    # contiguous N x K (the general tests: _rows_ok, _layout_of_b)
    if not ((ta[1] == 1 and ta[0] == k) or _rows_ok(sa, ta)):
        raise LaunchError(f"a must have contiguous rows a multiple of 16 bytes apart (strides "
                          f"{ta}); call .contiguous()")
    if 0 in (m, n, k):
        raise LaunchError(f"matmul of an empty product ({m} x {k} times {k} x {n}): nothing "
                          "for the GPU to do; handle it before the call")
    if tb[1] == 1 and tb[0] == n:
        return m, n, k, "kn", dtype, ta[0], n
    if tb[0] == 1 and tb[1] == k and k > 1 and n > 1:      # (else kn may hold: checked first)
        return m, n, k, "nk", dtype, ta[0], k
    layout, b_pitch = _layout_of_b(sb, tb)
    return m, n, k, layout, dtype, ta[0], b_pitch


def matmul(a, b, out=None, autotune=None, **knobs):
    """C = a @ b (see the module's docstring); `out` receives it when given. Batched
    operands follow torch.matmul (batches.py)."""
    import torch

    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and (a.dim() != 2
                                                                       or b.dim() != 2):
        from .batches import batched_matmul
        return batched_matmul(a, b, out, autotune, knobs, plain_eager=plain_eager(a, b),
                              matmul=matmul, matmul_into=matmul_into)
    if out is None and not knobs and not plain_eager(a, b):
        return torch.ops.argus.matmul(a, b, bool(autotune))
    return matmul_into(a, b, out, knobs, autotune)


def matmul_into(a, b, out, knobs: dict, autotune=None):
    """The computation behind both entries: checks, plan (cached per shape), launch."""
    m, n, k, layout, dtype, a_pitch, b_pitch = _operands(a, b)
    stored = (lambda: b) if layout == "kn" else b.t
    if out is None:
        out = _new_output(a, m, n)
    elif out.shape != (m, n) or out.dtype != a.dtype or not out.is_contiguous():
        raise LaunchError(f"out must be a contiguous {m} x {n} {a.dtype} tensor")
    if k % 8 or n % 8:
        return _padded(a, stored(), out, layout, dtype, m, n, k, knobs, autotune)
    if knobs:
        launcher, rounder = plan(layout, m, n, k, dtype, knobs)
    else:
        launcher, rounder = _tuned_plan(a, stored, out, layout, dtype, m, n, k, autotune)
    keyed = getattr(launcher, "launch_keyed", None)     # a launcher (or a test's stand-in)
    if rounder is not None or keyed is None:
        run_plan(launcher, rounder, a, stored(), out)
        return out
    # the launch's signature from what the checks read: a, b as stored and out, each fixed
    # by its address, device, shape (m, n, k), row pitch (unit columns: checked) and dtype
    # (the launcher's, checked above for a and b; out is a's or was checked)
    keyed(("matmul", layout, m, n, k, a.data_ptr(), a_pitch, a.get_device(), b.data_ptr(),
           b_pitch, b.get_device(), out.data_ptr(), out.get_device()),
          lambda: (a, stored(), out))
    return out


_SHAPED: dict = {}      # (m, n, dtype, device) -> a one-element tensor expanded to m x n
_empty_like = None      # torch.empty_like, once torch is imported


def _new_output(a, m, n):
    """A fresh contiguous m x n tensor of a's dtype on a's device: `empty_like` of an m x n
    view of one element (stride 0, so its result is laid out contiguously), 1.7 us of host
    time on an H100's host where a.new_empty((m, n)) takes 2.4 and torch.empty 3.1."""
    global _empty_like
    if _empty_like is None:
        import torch
        _empty_like = torch.empty_like
    key = (m, n, a.dtype, a.get_device())
    shaped = _SHAPED.get(key)
    if shaped is None:
        if len(_SHAPED) >= 256:
            _SHAPED.clear()
        shaped = _SHAPED[key] = a.new_empty((1, 1)).expand(m, n)
    # an overlapping input: empty_like's preserve_format gives contiguous strides
    return _empty_like(shaped)


def _padded(a, b_stored, out, layout, dtype, m, n, k, knobs, autotune):
    """A K or N that is not a multiple of 8: TMA needs rows a multiple of 16 bytes apart,
    so the operands are copied into zero-padded buffers of K and N rounded up to 8 (the
    zero columns of A meet zero rows of B: the product is unchanged) and the padded
    product's first N columns are copied into `out`. Two copies of the operands and one
    of the output per call: the price of an unaligned shape."""
    import torch

    k8, n8 = k + -k % 8, n + -n % 8
    line = PITCH_BYTES // a.element_size()       # the buffers' rows start on 128-byte lines
    a_pad = a
    if k8 != k:
        a_pad = torch.zeros((m, k8 + -k8 % line), dtype=a.dtype, device=a.device)[:, :k8]
        a_pad[:, :k] = a
    rows, cols = (k, n) if layout == "kn" else (n, k)
    rows8, cols8 = (k8, n8) if layout == "kn" else (n8, k8)
    b_pad = b_stored
    if (rows8, cols8) != (rows, cols):
        b_pad = torch.zeros((rows8, cols8 + -cols8 % line), dtype=b_stored.dtype,
                            device=b_stored.device)[:, :cols8]
        b_pad[:rows, :cols] = b_stored
    c_pad = out if n8 == n else torch.empty((m, n8), dtype=out.dtype, device=out.device)
    if knobs:
        launcher, rounder = plan(layout, m, n8, k8, dtype, knobs)
    else:
        launcher, rounder = _tuned_plan(a_pad, lambda: b_pad, c_pad, layout, dtype, m, n8,
                                        k8, autotune)
    run_plan(launcher, rounder, a_pad, b_pad, c_pad)
    if c_pad is not out:
        out.copy_(c_pad[:, :n])
    return out


def plan(layout, m, n, k, dtype, knobs: dict):
    return _plan(layout, m, n, k, dtype, tuple(sorted(knobs.items())),
                 *environment.values(KERNEL_ENV))


_chosen: dict[tuple, tuple] = {}     # a call's shape and switches -> its plan


def _tuned_plan(a, stored, out, layout, dtype, m, n, k, autotune):
    """The plan of a call without knobs, worked out once per shape, device and switches
    (what a call costs on the host matters): see _choose. `stored()`: B as stored (made
    only when a plan is worked out)."""
    key = (layout, m, n, k, dtype, out.get_device(), autotune) + _plan_env()
    chosen = _chosen.get(key)
    if chosen is None:
        chosen, final = _choose(a, stored(), out, layout, dtype, m, n, k, autotune)
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


def run_plan(launcher, rounder, a, b_stored, out) -> None:
    """One launch of a planned kernel into `out`; split-K (`rounder` given): the partial
    sums of the K ranges meet in an fp32 workspace that is all zeros, and `rounder` rounds
    it into `out` and clears it again (workspace.py)."""
    if rounder is None:
        launcher(a, b_stored, out)
        return
    with zeroed_workspace(out) as workspace:
        launcher(a, b_stored, workspace)
        rounder(workspace, out)
