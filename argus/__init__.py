"""Argus: a tile DSL for NVIDIA Hopper whose compiler verifies data-flow invariants.

Kernels are written with the names of `argus.lang` (`from argus.lang import *`, then
`@kernel(...)`); `argus.kernel` is the same decorator, imported on first use.
"""

__version__ = "0.1.0"


def __getattr__(name):
    # Lazy, so `import argus` stays cheap for the CLI and the layout tools.
    if name == "kernel":
        from argus.lang import kernel

        return kernel
    raise AttributeError(f"module 'argus' has no attribute {name!r}")
