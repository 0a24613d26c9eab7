"""Argus: a tile DSL for NVIDIA Hopper whose compiler verifies data-flow invariants.

Kernels are written with the names of `argus.lang` (`from argus.lang import *`, then
`@kernel(...)`); `argus.kernel` is the same decorator, imported on first use.

This package is also where the layers meet: a kernel called from Python (`k(A, B, C)`,
`k[grid](...)`) is a surface object (argus.lang) that knows no backend, so it hands the call
to `run_kernel` here, which gives it to the runtime (argus.runtime.jit: parse, build or
interpret, launch). The surface never imports the runtime, whose frontend imports it.
"""

__version__ = "0.1.0"


def __getattr__(name):
    # Lazy, so `import argus` stays cheap for the CLI and the layout tools.
    if name == "kernel":
        from argus.lang import kernel

        return kernel
    raise AttributeError(f"module 'argus' has no attribute {name!r}")


def run_kernel(kernel_def, args, constants, grid=None):
    """Run a kernel called from Python (argus.runtime.jit.call_kernel)."""
    from argus.runtime.jit import call_kernel

    call_kernel(kernel_def, args, constants, grid)
