"""`argus run FILE.py::KERNEL` without --interpret: generate, build and launch the kernel on
the GPU on random inputs (outputs poisoned first), then compare with the file's reference,
exactly as the interpreter path compares (argus.cli.run_reference)."""

from __future__ import annotations

import numpy as np

from argus.cli.errors import UsageError
from argus.cli.run_reference import compare

NUMPY_TO_TORCH = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32", "int32": "int32"}


def run_on_gpu(args, kernel, reference, symbols, inputs, outputs, arrays, expected) -> int:
    from argus.codegen import CodegenError, generate
    from argus.runtime import BuildError, BuildOptions, build_kernel
    from argus.runtime.launch import Launcher
    from argus.runtime.launch_errors import DriverError, LaunchError

    try:
        import torch
    except ImportError:
        raise UsageError("running on the GPU needs torch; install it, or add --interpret") from None
    if not torch.cuda.is_available():
        raise UsageError("no CUDA GPU here; add --interpret to run on the CPU interpreter")
    try:
        gen = generate(kernel)
        entry = build_kernel(gen.source, BuildOptions())
    except CodegenError as err:
        raise UsageError(str(err)) from None
    except BuildError as err:
        raise UsageError(f"{kernel.loc.file}: the generated CUDA did not compile (a backend "
                         f"bug; please report it):\n{err}") from None
    tensors = []
    for p in kernel.params:
        if not hasattr(p.type, "shape"):
            continue
        dtype = str(p.type.dtype)
        if dtype not in NUMPY_TO_TORCH:
            raise UsageError(f"tensor {p.name}: dtype {dtype} is not supported on the GPU path")
        host = torch.from_numpy(np.ascontiguousarray(arrays[p.name], dtype=np.float32)
                                if dtype != "int32" else np.ascontiguousarray(arrays[p.name]))
        tensors.append(host.to(getattr(torch, NUMPY_TO_TORCH[dtype])).cuda())
    shape_text = ",".join(f"{k}={v}" for k, v in symbols.items())
    print(f"{kernel.name}{f' [{shape_text}]' if shape_text else ''} seed={args.seed} on "
          f"{torch.cuda.get_device_name()}")
    try:
        Launcher(gen, entry.cubin, kernel)(*tensors)
        torch.cuda.synchronize()
    except (LaunchError, DriverError) as err:
        print(f"FAIL: {err}")
        return 1
    by_name = dict(zip([p.name for p in kernel.params if hasattr(p.type, "shape")], tensors))
    passed = True
    for p in outputs:
        got = by_name[p.name].float().cpu().numpy() if str(p.type.dtype) != "int32" else \
            by_name[p.name].cpu().numpy()
        passed &= compare(p.name, str(p.type.dtype), got, expected[p.name])
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1
