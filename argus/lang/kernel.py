"""`@argus.kernel(grid=..., block=..., cluster=...)`: marks a function as a kernel.

The function body is never run: the decorator records where the source is, and
`KernelDef.ir()` asks the frontend to parse it. The decorator's own arguments are read
from the source too (they may name the kernel's constants and shape symbols)."""

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

    def ir(self):
        """The kernel's IR (parsed from the defining file's source)."""
        from argus.frontend import parse_kernel_function
        return parse_kernel_function(self.function)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"kernel {self.name} is not callable from Python; run it with "
                        f"`argus run {self.file}::{self.name} --interpret`")


def kernel(grid=(1,), block=128, cluster=(1, 1, 1)):
    """Declare a kernel: grid (ints or expressions over shape symbols and constants),
    threads per block, cluster shape."""
    def wrap(fn):
        return KernelDef(fn.__name__, inspect.getsourcefile(fn) or "<unknown>", fn,
                         dict(grid=grid, block=block, cluster=cluster))
    return wrap
