"""A kernel's IR built for the GPU: generated CUDA, a cubin (from the on-disk cache of
build.py when it was built before) and the Launcher that runs it on the current stream.
Every way of running a DSL kernel on the GPU from Python builds through here: the library
ops (argus.ops.library), a kernel called like a function (jit.py)."""

from __future__ import annotations

import os

# try_wait polls before a debug build traps (~seconds); ARGUS_DEBUG_WAIT_LIMIT overrides it
DEBUG_WAIT_LIMIT = os.environ.get("ARGUS_DEBUG_WAIT_LIMIT", "200000000")
if not DEBUG_WAIT_LIMIT.isdigit() or int(DEBUG_WAIT_LIMIT) == 0:
    raise ValueError(f"ARGUS_DEBUG_WAIT_LIMIT must be a positive integer (polls), got "
                     f"{DEBUG_WAIT_LIMIT!r}")


def build_launcher(kernel_ir, debug: bool = False):
    """The Launcher of `kernel_ir`; `debug` bounds every mbarrier wait (it traps naming
    barrier and phase instead of hanging)."""
    from argus.codegen import generate

    from .build import BuildOptions, build_kernel
    from .launch import Launcher

    gen = generate(kernel_ir)
    defines = (("ARGUS_MBARRIER_WAIT_LIMIT", DEBUG_WAIT_LIMIT),) if debug else ()
    entry = build_kernel(gen.source, BuildOptions(defines=defines))
    launcher = Launcher(gen, entry.cubin, kernel_ir)
    launcher.build = entry
    return launcher
