"""Kernel tasks from DSL files: `argus optimize FILE.py::KERNEL` and the ops that have one.

A DSL file with a NumPy `reference` (and optionally `inputs(rng, symbols)`) is a task as it
stands: the inputs are drawn as `argus run` draws them (run_reference.py), the reference
runs in its isolated child (reference_sandbox.py; the file is parsed, never imported), the
outputs are the kernel's tensors the reference does not take, compared with argus run's
per-dtype tolerance. The start of the search is the file's own kernel.

The named ops are such files: each op lists where its kernel lives, the library first
(argus/kernels/, written by other work as it lands), then the example; the first file that
exists and defines the kernel is the task's, so `argus optimize attention` picks up the
library's attention kernel the day it exists, with no change here.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from argus.agent.tasks.kernel_task import INPUT_SETS, KernelTask, Tolerance
from argus.agent.task import TaskError

REPO = Path(__file__).resolve().parents[3]

# op -> ((file, kernel), ...) in order of preference, and its default shape
OP_SOURCES = {
    "attention": ((("argus/kernels/attention.py", "flash_fwd"),
                   ("argus/kernels/flash_attention.py", "flash_fwd"),
                   ("examples/flash_attention.py", "flash_fwd")), {"T": 256}),
    "moe": ((("argus/kernels/moe.py", "moe_grouped"),
             ("examples/moe.py", "moe_grouped")), {}),
}


def op_source(op: str) -> tuple[Path, str]:
    if op not in OP_SOURCES:
        raise TaskError(f"op {op!r} has no kernel task; use one of "
                        f"{', '.join(['gemm', *OP_SOURCES])} or FILE.py::KERNEL")
    for file, kernel in OP_SOURCES[op][0]:
        path = REPO / file
        if path.exists() and f"def {kernel}(" in path.read_text(encoding="utf-8"):
            return path, kernel
    raise TaskError(f"no kernel file for {op} was found (looked for "
                    f"{', '.join(f for f, _ in OP_SOURCES[op][0])})")


def op_task(op: str, shape: dict[str, int], start: Path | None = None,
            sets: int = INPUT_SETS) -> KernelTask:
    path, kernel = op_source(op)
    return file_task(path, kernel, {**OP_SOURCES[op][1], **shape}, start=start, op=op,
                     sets=sets)


def parse_target(target: str) -> tuple[Path, str]:
    path_text, sep, name = target.partition("::")
    if not sep or not name:
        raise TaskError(f"{target!r} is not FILE.py::KERNEL; name the kernel, e.g. "
                        f"examples/copy.py::copy")
    path = Path(path_text)
    if not path.is_file():
        raise TaskError(f"{path_text}: no such file")
    return path, name


def file_task(path: Path, kernel_name: str, shape: dict[str, int], *, start: Path | None = None,
              op: str = "kernel", sets: int = INPUT_SETS, seed: int = 0) -> KernelTask:
    """The task of one DSL kernel with its file's reference (UsageError-style TaskError on
    anything wrong with the file, naming file:line)."""
    from argus.cli.errors import UsageError
    from argus.cli.run_cmd import bind_shapes
    from argus.cli.run_reference import (TOLERANCE, call_reference, example_inputs,
                                         load_reference, random_input, split_params)
    from argus.frontend import DSLError, parse_file

    try:
        kernels = parse_file(str(path))
    except DSLError as err:
        raise TaskError(err.format()) from None
    if kernel_name not in kernels:
        raise TaskError(f"{path}: no @kernel {kernel_name!r}; it defines "
                        f"{', '.join(kernels) or 'none'}")
    kernel = kernels[kernel_name]
    try:
        reference = load_reference(path, kernel_name)
        symbols = bind_shapes(kernel, shape)
        inputs, outputs = split_params(kernel, reference)
        input_sets, expected = [], []
        for i in range(sets):
            rng = np.random.default_rng(seed + i)
            arrays = {p.name: random_input(rng, p.type, symbols) for p in inputs}
            arrays.update(example_inputs(reference, rng, symbols, inputs))
            want = call_reference(reference, kernel, [arrays[p.name] for p in inputs], outputs)
            for p in outputs:
                arrays[p.name] = np.full(tuple(symbols[d] if isinstance(d, str) else d
                                               for d in p.type.shape),
                                         np.iinfo(np.int32).min if str(p.type.dtype) == "int32"
                                         else np.nan, np.int32 if str(p.type.dtype) == "int32"
                                         else np.float32)
            input_sets.append(arrays)
            expected.append(want)
    except UsageError as err:
        raise TaskError(str(err)) from None
    out_dtype = str(outputs[0].type.dtype)
    tensors = [p.name for p in kernel.params if hasattr(p.type, "shape")
               and p.name in input_sets[0]]
    shape_text = ",".join(f"{k}={v}" for k, v in sorted(symbols.items()))
    source = Path(start or path).read_text(encoding="utf-8")
    return KernelTask(
        op=op, label=f"{op} {shape_text}",
        description=(f"the kernel {kernel_name} of {path.name} ({path}), shapes {shape_text}: "
                     f"write the kernel {kernel_name} with the same tensor parameters "
                     f"({', '.join(tensors)}); the outputs {', '.join(p.name for p in outputs)} "
                     f"are compared with the file's reference on {sets} random input sets"),
        start_source=source, mode="kernel", input_sets=input_sets, expected=expected,
        kernel=kernel_name, tensors=tensors, outputs=[p.name for p in outputs],
        tolerance=Tolerance(rtol=TOLERANCE.get(out_dtype, 1e-5), scaled=True),
        dtype=out_dtype)     # flops 0: a file's useful work is not known; time ranks
