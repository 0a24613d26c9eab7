"""The candidate the harness loads in its child process for a model-written DSL kernel.

The kernel file arrives in ARGUS_AGENT_KERNEL_FILE (set by GpuEvaluator.evaluate_kernel
before the child starts). The file is parsed by the DSL frontend (never imported), then
generated, built and launched exactly as the library kernels are (argus.ops.library):
`gemm(inputs, outputs)` launches it on (A, B, C); for a kernel whose B is declared N x K
the job asks the problem for b_layout="nk", so the b it gets is stored N x K.
Runs only in the harness's child; nothing here is imported by the planner.
"""
from __future__ import annotations

import os

KERNEL_ENV = "ARGUS_AGENT_KERNEL_FILE"
_STATE: dict = {}


def launcher():
    if "launch" not in _STATE:
        from argus.codegen import generate
        from argus.frontend import parse_file
        from argus.runtime import build_kernel
        from argus.runtime.launch import Launcher

        kernels = parse_file(os.environ[KERNEL_ENV])
        if len(kernels) != 1:
            raise ValueError(f"the kernel file must define one @kernel, it defines "
                             f"{len(kernels)}")
        ir = next(iter(kernels.values()))
        gen = generate(ir)
        entry = build_kernel(gen.source)
        _STATE["launch"] = Launcher(gen, entry.cubin, ir)
    return _STATE["launch"]


def gemm(inputs, outputs) -> None:
    launcher()(inputs[0], inputs[1], outputs[0])
