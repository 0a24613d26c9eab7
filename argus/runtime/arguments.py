"""Binding a kernel's arguments, in order: torch tensors, NumPy arrays or DLPack arrays, one
per global tensor parameter, and a Python int per size parameter (`SQ: Dim`). The shape
symbols are read off the arrays and the ints (a symbol given twice must agree); count, type,
dtype, rank and layout are checked, each with a sentence saying what to change. Both ways of running a kernel bind through here: the GPU launcher
(launch.py, which adds alignment, the `assume`s and the device) and the interpreter
(interpreted.py), so a call is refused alike on both.
"""

from __future__ import annotations

from dataclasses import dataclass

from argus.ir.types import GlobalTensorType

from .launch_errors import LaunchError

# the dtype name a torch tensor and a NumPy array (ml_dtypes for bf16/fp8) of each IR dtype has
ARRAY_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "int32": "int32",
                "fp8e4m3": "float8_e4m3fn"}


@dataclass(frozen=True)
class TensorParam:
    name: str
    dtype: str                   # IR dtype name: bf16, fp16, fp32, int32, fp8e4m3
    shape: tuple | None          # ints and shape-symbol names; None: not known (unchecked)


@dataclass(frozen=True)
class SizeParam:
    name: str                    # the shape symbol it gives (`SQ: Dim`)


def tensor_params(kernel_ir) -> list[TensorParam]:
    """The kernel's global tensor parameters, in order."""
    return [TensorParam(p.name, str(p.type.dtype), tuple(p.type.shape))
            for p in kernel_ir.params if isinstance(p.type, GlobalTensorType)]


def launch_params(kernel_ir) -> list[TensorParam | SizeParam]:
    """The kernel's launch arguments, in order: its global tensors and its size parameters."""
    tensors = {p.name: p for p in tensor_params(kernel_ir)}
    sizes = set(kernel_ir.size_params)
    return [tensors[n] if n in tensors else SizeParam(n)
            for n in kernel_ir.argument_names if n in tensors or n in sizes]


def bind_size(p: SizeParam, value, sizes: dict[str, int]) -> None:
    """Record the int given for size parameter `p` in `sizes`; LaunchError if it is not a
    positive int or disagrees with a tensor's dim of the same symbol."""
    if isinstance(value, bool) or not hasattr(value, "__index__") or \
            tuple(getattr(value, "shape", ())) != ():      # an int, or a NumPy int scalar
        raise LaunchError(f"size {p.name} must be a Python int, got {type(value).__name__}")
    value = int(value.__index__())
    if value <= 0:
        raise LaunchError(f"size {p.name} must be a positive int, got {value}")
    if sizes.setdefault(p.name, value) != value:
        raise LaunchError(f"size {p.name} is {value}, but a tensor has {p.name} = "
                          f"{sizes[p.name]}; make them agree")


def _is_torch(value) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "data_ptr")


def _is_numpy(value) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "dtype") and \
        hasattr(value, "flags")


def as_array(name: str, value, allow_numpy: bool):
    """The value as a torch tensor (DLPack arrays are shared, not copied) or, where
    `allow_numpy`, a NumPy array as it is."""
    if _is_torch(value) or (allow_numpy and _is_numpy(value)):
        return value
    if hasattr(value, "__dlpack__"):
        import torch
        return torch.from_dlpack(value)     # CuPy, JAX, ... arrays
    raise LaunchError(f"{name} must be a torch tensor or a DLPack array, got "
                      f"{type(value).__name__}")


def dtype_name(array) -> str:
    """'bfloat16', 'float32', ... for a torch tensor or a NumPy array."""
    return str(array.dtype).removeprefix("torch.")


def is_contiguous(array) -> bool:
    return array.is_contiguous() if _is_torch(array) else bool(array.flags.c_contiguous)


def row_strided(array) -> bool:
    """A 2-D torch view whose rows are contiguous but lie further apart than their length
    (a column slice `x[:, :k]`, or rows padded to an aligned pitch)."""
    return (_is_torch(array) and array.dim() == 2 and array.stride(1) == 1
            and array.stride(0) >= array.shape[1])


def bind_arguments(kernel_name: str, params: list[TensorParam | SizeParam], args,
                   allow_numpy: bool = False,
                   strided: frozenset = frozenset()) -> tuple[dict, dict[str, int]]:
    """({parameter name: array}, {shape symbol: size}); LaunchError names what is wrong.
    The tensors named in `strided` (the ones the kernel reads and writes only through TMA
    tensor maps, which carry their own row pitch) may be row-strided views; every other
    one must be contiguous."""
    if len(args) != len(params):
        names = ", ".join(p.name for p in params)
        what = "arguments" if any(isinstance(p, SizeParam) for p in params) else "tensors"
        raise LaunchError(f"{kernel_name} takes {len(params)} {what} ({names}), got "
                          f"{len(args)}")
    sizes: dict[str, int] = {}
    bound = {}
    for p, value in zip(params, args):
        if isinstance(p, SizeParam):
            continue
        t = as_array(p.name, value, allow_numpy)
        want = ARRAY_DTYPES.get(p.dtype)
        got = dtype_name(t)
        if want is not None and got != want:
            shown = f"torch.{got}" if _is_torch(t) else got
            raise LaunchError(f"{p.name} must be {p.dtype}, got {shown}")
        shape = tuple(t.shape)
        if p.shape is not None and len(shape) != len(p.shape):
            raise LaunchError(f"{p.name} must be {len(p.shape)}-D, got shape {shape}")
        if not is_contiguous(t) and not (p.name in strided and row_strided(t)):
            strides = t.stride() if _is_torch(t) else t.strides
            raise LaunchError(f"{p.name} must be contiguous row-major (strides {strides}); "
                              "call .contiguous()")
        for d, (want_dim, got_dim) in enumerate(zip(p.shape or (), shape)):
            if isinstance(want_dim, int):
                if want_dim != got_dim:
                    raise LaunchError(f"{p.name} dimension {d} must be {want_dim}, got {got_dim}")
            elif sizes.setdefault(want_dim, got_dim) != got_dim:
                raise LaunchError(f"{p.name} dimension {d} is {want_dim} = {got_dim}, but "
                                  f"another tensor has {want_dim} = {sizes[want_dim]}")
        bound[p.name] = t
    for p, value in zip(params, args):     # after the tensors: their dims of it must agree
        if isinstance(p, SizeParam):
            bind_size(p, value, sizes)
    return bound, sizes
