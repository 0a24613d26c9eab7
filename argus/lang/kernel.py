"""`@argus.kernel(grid=..., block=..., cluster=..., blocks_per_sm=...)`: marks a function as a kernel;
`@argus.helper`: marks a module-level function as a device helper, inlined at parse time
into every kernel (or helper) that calls it.

The function bodies are never run: the decorators record where the source is, and
`argus.frontend.parse_kernel_function(k.function)` parses it (the surface knows no
frontend). The decorator's own arguments are read from the source too (they may name the
kernel's constants and shape symbols). Calling a kernel, `k(A, B, C)` or `k[grid](...)`,
hands it through `argus.run_kernel` to argus.runtime.jit, which parses, builds and launches
it (GPU or interpreter)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any


@dataclass
class KernelDef:
    name: str
    file: str
    function: Any
    launch: dict

    def __call__(self, *tensors, **constants):
        """Run the kernel on `tensors` (one per tensor parameter; outputs written in place),
        specialised with `constants`: on the GPU, on torch's current stream, or on the CPU
        interpreter under ARGUS_INTERPRET=1 (argus.runtime.jit says how)."""
        import argus      # the package wires the surface to the runtime (argus/__init__)
        argus.run_kernel(self, tensors, constants)

    def __getitem__(self, grid):
        """`kern[grid](...)`: the same call with the launch grid given."""
        return GridLaunch(self, grid)


@dataclass(frozen=True)
class GridLaunch:
    """`kern[grid]`: the kernel with its launch grid given by the caller (ints, a tuple of
    up to three, or a function of the shape symbols and constants returning them)."""
    kernel: KernelDef
    grid: Any

    def __call__(self, *tensors, **constants):
        import argus
        argus.run_kernel(self.kernel, tensors, constants, self.grid)


def kernel(grid=(1,), block=128, cluster=(1, 1, 1), blocks_per_sm=1, block_order="forward"):
    """Declare a kernel: grid (ints or expressions over shape symbols and constants),
    threads per block, cluster shape, how many blocks an SM is meant to hold at once
    (each then has 1/blocks_per_sm of the register file and shared memory), and the order
    the hardware launches the blocks in ("reversed": the last ids first; the same blocks)."""
    def wrap(fn):
        return KernelDef(fn.__name__, inspect.getsourcefile(fn) or "<unknown>", fn,
                         dict(grid=grid, block=block, cluster=cluster,
                              blocks_per_sm=blocks_per_sm, block_order=block_order))
    return wrap


@dataclass
class HelperDef:
    name: str
    file: str
    function: Any

    def __call__(self, *args, **kwargs):
        raise TypeError(f"helper {self.name} is not callable from Python: it only has meaning "
                        "inside an @argus.kernel body (or another helper), where Argus inlines "
                        "it when it parses the kernel's source")


def helper(fn=None):
    """Declare a device helper: a module-level function whose body is inlined, at parse time,
    where a kernel (or another helper) calls it. Its parameters are bound to the caller's
    values (fragments, buffers, barriers, tiles, scalars, constants); the names it binds stay
    its own; `return` as its last statement hands values back. `@helper` or `@helper()`."""
    def wrap(f):
        return HelperDef(f.__name__, inspect.getsourcefile(f) or "<unknown>", f)
    return wrap if fn is None else wrap(fn)
