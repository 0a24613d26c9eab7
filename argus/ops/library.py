"""Library kernels, specialised and built once per process: DSL source -> IR -> CUDA ->
cubin (disk-cached) -> a Launcher (argus.runtime.compiled), or the interpreter's launcher
under ARGUS_INTERPRET=1. `library_kernel("gemm", "gemm_nn", DT="fp16", BN=128)`."""

from __future__ import annotations

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


def library_kernel(module: str, name: str, debug: bool | None = None, **overrides):
    """The launcher of one specialisation (built on first use, then reused): the GPU
    build's, or the interpreter's under ARGUS_INTERPRET=1 (argus.runtime.modes)."""
    from argus.runtime.modes import debug_builds, interpret_mode, make_launcher

    debug = debug_builds() if debug is None else debug
    mode = interpret_mode()
    key = (module, name, debug, mode, tuple(sorted(overrides.items())))
    with _lock:
        launcher = _built.get(key)
        if launcher is None:
            launcher = _built[key] = make_launcher(kernel_ir(module, name, **overrides), mode,
                                                   debug)
        return launcher
