"""Library kernels, specialised and built once per process: DSL source -> IR -> CUDA ->
cubin (disk-cached) -> a Launcher. `library_kernel("gemm", "gemm_nn", DT="fp16", BN=128)`."""

from __future__ import annotations

import os
import threading
from pathlib import Path

KERNEL_DIR = Path(__file__).resolve().parent.parent / "kernels"
_lock = threading.Lock()
_built: dict[tuple, object] = {}


def kernel_ir(module: str, name: str, **overrides):
    from argus.frontend import parse_file

    kernels = parse_file(KERNEL_DIR / f"{module}.py", overrides)
    if name not in kernels:
        raise KeyError(f"argus/kernels/{module}.py has no kernel {name!r}; it has "
                       f"{', '.join(kernels)}")
    return kernels[name]


def generated(module: str, name: str, **overrides):
    from argus.codegen import generate
    return generate(kernel_ir(module, name, **overrides))


DEBUG_WAIT_LIMIT = "200000000"   # try_wait polls before a debug build traps (~seconds)


def debug_builds() -> bool:
    """ARGUS_DEBUG=1: every mbarrier wait is bounded and traps naming barrier and phase."""
    return os.environ.get("ARGUS_DEBUG", "") not in ("", "0")


def library_kernel(module: str, name: str, debug: bool | None = None, **overrides):
    """The launcher of one specialisation (built on first use, then reused)."""
    debug = debug_builds() if debug is None else debug
    key = (module, name, debug, tuple(sorted(overrides.items())))
    with _lock:
        launcher = _built.get(key)
        if launcher is None:
            from argus.codegen import generate
            from argus.runtime import BuildOptions, build_kernel
            from argus.runtime.launch import Launcher

            ir = kernel_ir(module, name, **overrides)
            gen = generate(ir)
            defines = (("ARGUS_MBARRIER_WAIT_LIMIT", DEBUG_WAIT_LIMIT),) if debug else ()
            entry = build_kernel(gen.source, BuildOptions(defines=defines))
            launcher = _built[key] = Launcher(gen, entry.cubin, ir)
            launcher.build = entry
        return launcher
