"""Library kernels, specialised and built once per process: DSL source -> IR -> CUDA ->
cubin (disk-cached) -> a Launcher. `library_kernel("gemm", "gemm_nn", DT="fp16", BN=128)`."""

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


def library_kernel(module: str, name: str, **overrides):
    """The launcher of one specialisation (built on first use, then reused)."""
    key = (module, name, tuple(sorted(overrides.items())))
    with _lock:
        launcher = _built.get(key)
        if launcher is None:
            from argus.codegen import generate
            from argus.runtime import BuildOptions, build_kernel
            from argus.runtime.launch import Launcher

            ir = kernel_ir(module, name, **overrides)
            gen = generate(ir)
            entry = build_kernel(gen.source, BuildOptions())
            launcher = _built[key] = Launcher(gen, entry.cubin, ir)
            launcher.build = entry
        return launcher
