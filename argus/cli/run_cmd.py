"""`argus run FILE.py::KERNEL [--interpret [--exact]] [--shape M=256,N=256] [--seed N]`: run a
kernel on fresh random inputs and compare with the file's NumPy `reference`: on the GPU
(generated CUDA, sm_90a) by default, on the CPU interpreter with --interpret. --exact runs
the interpreter's fragment-exact mode (per-thread registers through the fragment layouts,
shared memory as swizzled bytes); without it, value mode (logical tiles).

The file is never imported: the reference is read from its syntax tree and runs in an
isolated child process (run_reference.py), with the file's plain functions, its imports of
numpy, math and a few standard modules, and its module constants; nothing else of the file.
The reference is a function `reference(IN1, IN2, ...)` in the same file whose parameters
are named after the kernel's input tensors; every tensor parameter it does not take is an
output, and it returns that output (a tuple when there are several). Reference parameters
with defaults that name a kernel constant (case-insensitive, e.g. causal <- CAUSAL) get
the constant's value. Inputs are standard-normal values rounded to the tensor's dtype;
outputs start as NaN (int32 ones as -2^31), so an element the kernel never writes fails, and
NaN never passes.
A file may define `inputs(rng, symbols)` returning some inputs by name (e.g. routing counts
that must add up to the number of tokens); those replace the random ones.

Shape symbols come from --shape; missing ones take the default for the kernel:
  copy:      M=128,N=128
  gemm:      M=128,N=256,K=64
  flash_fwd: T=256
  moe_grouped: T=300,K=128,N=256,EN=2048 (EN = 8 experts * N)
  moe_gate_up: T=100,K=128,F=128,EF=1024,P=300 (EF = 8 * F, P routed slots)
  moe_combine: T=128,N=128,P=256 (P = 2 * T)
  moe_route:   T=128,P=256 (P = 2 * T)
Exit status: 0 when every output matches, 1 on a mismatch or a machine failure (deadlock,
fault), 2 on a usage or DSL error. Only --interpret exists: the GPU backend is not built.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from argus.cli.compile_cmd import load_kernel, split_target
from argus.cli.errors import UsageError
from argus.cli.run_gpu import run_on_gpu
from argus.cli.run_reference import (call_reference, compare, concrete_shape, example_inputs,
                                     load_reference, poisoned, random_input, split_params,
                                     tensor_params)
from argus.input_limits import MAX_RUN_ELEMENTS, MAX_SHAPE_EXTENT

DEFAULT_SHAPES = {
    "copy": {"M": 128, "N": 128},
    "gemm": {"M": 128, "N": 256, "K": 64},
    "flash_fwd": {"T": 256},
    "moe_grouped": {"T": 300, "K": 128, "N": 256, "EN": 2048},
    "moe_gate_up": {"T": 100, "K": 128, "F": 128, "EF": 1024, "P": 300},
    "moe_combine": {"T": 128, "N": 128, "P": 256},
    "moe_route": {"T": 128, "P": 256},
}


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "run", help="run a kernel on random inputs and compare with its reference",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", metavar="FILE.py::KERNEL", help="the kernel to run")
    parser.add_argument("--interpret", action="store_true",
                        help="run on the CPU interpreter (without it: on the GPU, sm_90)")
    parser.add_argument("--exact", action="store_true",
                        help="fragment-exact interpreter mode: registers per thread through "
                             "the layouts, shared memory through the swizzles (slower)")
    parser.add_argument("--shape", type=parse_shape, default={}, metavar="SYM=N,...",
                        help="bind shape symbols, e.g. M=256,N=256,K=128")
    parser.add_argument("--seed", type=parse_seed, default=0,
                        help="seed of the inputs and of the interpreter's scheduler")
    parser.add_argument("--const", type=parse_const, default={}, metavar="NAME=N,...",
                        help="replace module constants or const parameters, e.g. "
                             "HD=128,CAUSAL=0 (the reference gets them by name too)")
    parser.set_defaults(run=run_kernel)


def parse_shape(text: str, smallest: int = 1) -> dict[str, int]:
    bindings = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name.strip().isidentifier() or not value.strip().isdigit():
            raise argparse.ArgumentTypeError(
                f"'{part}' is not SYM=N; write e.g. --shape M=256,N=256")
        if len(value.strip()) > 12 or not smallest <= int(value) <= MAX_SHAPE_EXTENT:
            raise argparse.ArgumentTypeError(
                f"'{part}': a value must be {smallest}..{MAX_SHAPE_EXTENT} (int32 indices)")
        bindings[name.strip()] = int(value)
    return bindings


def parse_seed(text: str) -> int:
    """--seed N: a non-negative integer under 2**63 (what NumPy's generators take)."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if not 0 <= seed < 2 ** 63:
        raise argparse.ArgumentTypeError(f"{text}: a seed is 0 .. 2**63-1")
    return seed


def parse_const(text: str) -> dict[str, int]:
    """--const NAME=N,...: as --shape, and 0 is a value (CAUSAL=0)."""
    return parse_shape(text, smallest=0)


def run_kernel(args) -> int:
    mode = "exact" if getattr(args, "exact", False) else "value"
    from argus.interp.errors import InterpretError
    from argus.interp.evaluator import interpret

    kernel = load_kernel(args.target, getattr(args, "const", None))
    path, kernel_name = split_target(args.target)
    reference = load_reference(path, kernel_name, getattr(args, "const", None))
    symbols = bind_shapes(kernel, args.shape)
    inputs, outputs = split_params(kernel, reference)
    rng = np.random.default_rng(args.seed)
    arrays = {p.name: random_input(rng, p.type, symbols) for p in inputs}
    arrays.update(example_inputs(reference, rng, symbols, inputs))
    arrays.update({p.name: poisoned(concrete_shape(p.type, symbols), str(p.type.dtype))
                   for p in outputs})
    expected = call_reference(reference, kernel, [arrays[p.name] for p in inputs], outputs)
    if not args.interpret:
        return run_on_gpu(args, kernel, reference, symbols, inputs, outputs, arrays, expected)
    shape_text = ",".join(f"{k}={v}" for k, v in symbols.items())
    print(f"{kernel.name}{f' [{shape_text}]' if shape_text else ''} seed={args.seed} "
          f"on the interpreter" + (" (fragment-exact)" if mode == "exact" else ""))
    try:
        sizes = {n: symbols[n] for n in kernel.size_params}      # `SQ: Dim` arguments
        result = interpret(kernel, {**arrays, **sizes}, seed=args.seed, mode=mode)
    except InterpretError as err:
        print(f"FAIL: the interpreter stopped: {err}")
        return 1
    if not result.ok:
        for line in result.failures():
            print(f"FAIL: {line}")
        return 1
    passed = True
    for p in outputs:
        passed &= compare(p.name, str(p.type.dtype), result.outputs[p.name], expected[p.name])
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


def bind_shapes(kernel, given: dict[str, int]) -> dict[str, int]:
    """Every shape symbol of the kernel's tensors: --shape first, then the kernel's default."""
    needed = []
    for p in tensor_params(kernel):
        needed += [d for d in p.type.shape if isinstance(d, str) and d not in needed]
    unknown = sorted(set(given) - set(needed))
    if unknown:
        raise UsageError(f"--shape binds {unknown}, which kernel {kernel.name} does not use; "
                         f"its shape symbols are {needed}")
    defaults = DEFAULT_SHAPES.get(kernel.name, {})
    symbols = {s: given.get(s, defaults.get(s)) for s in needed}
    missing = [s for s, v in symbols.items() if v is None]
    if missing:
        raise UsageError(f"no value for shape symbols {missing} of kernel {kernel.name}; "
                         f"pass --shape " + ",".join(f"{s}=N" for s in missing))
    elements = sum(math.prod(concrete_shape(p.type, symbols)) for p in tensor_params(kernel))
    if elements > MAX_RUN_ELEMENTS:
        shape_text = ",".join(f"{k}={v}" for k, v in symbols.items())
        raise UsageError(f"--shape {shape_text}: the tensors of kernel {kernel.name} would "
                         f"have {elements} elements, over the {MAX_RUN_ELEMENTS} the "
                         f"interpreter runs; use smaller sizes (the defaults are "
                         f"{DEFAULT_SHAPES.get(kernel.name) or 'a few hundred'})")
    return symbols
