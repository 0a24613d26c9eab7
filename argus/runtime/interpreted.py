"""Running a kernel's IR on the CPU interpreter with the launcher's calling convention:
`InterpretedLauncher(kernel_ir)(*arrays, grid=None)`, what ARGUS_INTERPRET=1 puts in place
of the GPU launcher (modes.py), as Triton's interpreter does for its kernels.

The arguments are bound and checked as for the GPU (arguments.py: count, dtype, rank, row-
major layout, shape symbols); torch tensors on any device and NumPy arrays are accepted. Each
array's values go to the interpreter, and every array the kernel changed gets its new values
copied back into it (a CUDA tensor through the host), so the call writes its outputs in place
exactly as the GPU launch does. A run that deadlocks or trips a hazard raises KernelFailed
with the interpreter's report; nothing is copied back then.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .arguments import SizeParam, bind_arguments, launch_params
from .launch_errors import KernelFailed

MODES = {"1": "value", "value": "value", "exact": "exact"}


class InterpretedLauncher:
    def __init__(self, kernel_ir, mode: str = "value", seed: int = 0):
        self.ir = kernel_ir
        self.mode = mode
        self.seed = seed
        self._params = launch_params(kernel_ir)

    @property
    def name(self) -> str:
        return self.ir.name

    def bind(self, arrays) -> tuple[dict, dict]:
        # the interpreter copies every tensor in and out: a row-strided view is as good
        return bind_arguments(self.ir.name, self._params, arrays, allow_numpy=True,
                              strided=frozenset(p.name for p in self._params
                                                       if not isinstance(p, SizeParam)))

    def launch_keyed(self, key: tuple, arrays) -> None:
        """The GPU launcher's keyed launch (launch.Launcher.launch_keyed): a plain call."""
        del key
        self(*arrays())

    def __call__(self, *arrays, grid: tuple[int, ...] | None = None) -> None:
        from argus.interp.errors import InterpretError
        from argus.interp.evaluator import interpret

        bound, sizes = self.bind(arrays)
        values = {name: host_values(a) for name, a in bound.items()}
        given = {p.name: sizes[p.name] for p in self._params if isinstance(p, SizeParam)}
        kernel = self.ir if grid is None else _with_grid(self.ir, grid)
        try:
            result = interpret(kernel, {**values, **given}, seed=self.seed, mode=self.mode)
        except InterpretError as err:
            raise KernelFailed(f"{self.ir.name}: the interpreter stopped: {err}") from None
        if not result.ok:
            raise KernelFailed(f"{self.ir.name} failed on the interpreter: "
                               + "; ".join(result.failures()))
        for name, array in bound.items():
            new = result.outputs[name]
            if not np.array_equal(new, values[name], equal_nan=True):
                write_back(array, new)


def _with_grid(kernel_ir, grid):
    """The kernel with its launch grid replaced by `grid` (kern[grid](...))."""
    launch = dataclasses.replace(kernel_ir.launch, grid=tuple(str(g) for g in grid))
    return dataclasses.replace(kernel_ir, launch=launch)


def host_values(array) -> np.ndarray:
    """The array's values as fp32 (int32 for integer tensors) on the host."""
    if hasattr(array, "detach"):           # torch
        import torch
        t = array.detach()
        t = t.to("cpu", torch.int32 if not t.is_floating_point() else torch.float32)
        return t.numpy()
    return np.asarray(array, np.int32 if array.dtype.kind in "iu" else np.float32)


def write_back(array, values: np.ndarray) -> None:
    """Store the interpreter's values (already rounded to the array's dtype) into it."""
    if hasattr(array, "detach"):
        import torch
        with torch.no_grad():
            array.copy_(torch.from_numpy(np.ascontiguousarray(values)))
    else:
        array[...] = values.astype(array.dtype)
