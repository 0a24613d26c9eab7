"""What `argus run` compares a kernel with: random inputs, poisoned outputs, the file's NumPy
`reference` and the tolerance per dtype (see run_cmd's help for the conventions).

The kernel file is never imported: its reference is read from the syntax tree
(reference_source.py) and runs, with the file's `inputs`, in an isolated child process
(reference_sandbox.py), so no code of an untrusted file runs in the harness.

Both paths of `argus run` use it, the interpreter's (run_cmd) and the GPU's (run_gpu), and so
does the verifier's mutation tester (tools/mutation/runner.py).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from argus.cli.errors import UsageError
from argus.cli.reference_sandbox import run_step
from argus.cli.reference_source import Reference, read_reference
from argus.ir.types import GlobalTensorType

# Relative tolerance per output dtype: a few units in the last place of that format.
TOLERANCE = {"fp32": 1e-5, "fp16": 2 ** -9, "bf16": 2 ** -7, "fp8e4m3": 2 ** -2, "int32": 0.0}


def load_reference(path: Path, kernel_name: str | None = None,
                   overrides: dict | None = None) -> Reference:
    """`reference_<kernel>` when the file has one (several kernels), else `reference`: read
    from the file's syntax tree, not imported; `overrides` are the --const values."""
    return read_reference(path, kernel_name, overrides)


def poisoned(shape, dtype: str) -> np.ndarray:
    """An output before the kernel runs: NaN, or the most negative int32 for int32 outputs
    (which have no NaN)."""
    if dtype == "int32":
        return np.full(shape, np.iinfo(np.int32).min, np.int32)
    return np.full(shape, np.nan, np.float32)


def example_inputs(reference: Reference, rng, symbols, inputs) -> dict[str, np.ndarray]:
    """The inputs the reference's file makes itself with `inputs(rng, symbols)`, by name (run
    in the isolated child; `rng` continues from the state the child leaves it in)."""
    if not reference.has_inputs:
        return {}
    reply, arrays = run_step(reference, "inputs", {}, rng_state=rng.bit_generator.state,
                             symbols=dict(symbols), constants=reference.constants)
    rng.bit_generator.state = reply["rng_state"]
    made = {name: arrays[f"in_{name}"] for name in reply["made"]}
    expected = {p.name: concrete_shape(p.type, symbols) for p in inputs}
    for name, value in made.items():
        if name not in expected:
            raise UsageError(f"inputs() made {name!r}, which is not an input tensor of the "
                             f"kernel; it takes {sorted(expected)}")
        if np.shape(value) != expected[name]:
            raise UsageError(f"inputs() made {name} of shape {np.shape(value)}; the kernel "
                             f"needs {expected[name]}")
    return made


def split_params(kernel, reference):
    """(inputs, outputs): tensor parameters the reference takes, and those it does not."""
    takes = set(reference.params)
    tensors = tensor_params(kernel)
    inputs = [p for p in tensors if p.name in takes]
    outputs = [p for p in tensors if p.name not in takes]
    if not outputs:
        raise UsageError(f"reference takes every tensor of kernel {kernel.name}; leave the "
                         f"output tensors out of its parameters")
    return inputs, outputs


def call_reference(reference: Reference, kernel, args, outputs) -> dict[str, np.ndarray]:
    """The reference's outputs on `args` (the kernel's input tensors it takes, in order), run
    in the isolated child. Parameters with a default that names a kernel constant
    (case-insensitive) get the constant, converted to the default's type."""
    constants = {k.lower(): v for k, v in kernel.constants.items()}
    keywords = {name: type(default)(constants[name.lower()]) if default is not None
                else constants[name.lower()]
                for name, default in reference.defaults.items() if name.lower() in constants}
    names = [n for n in reference.params if n not in keywords][:len(args)]
    # the module constants the reference reads, as the kernel was specialised
    module = {**reference.constants,
              **{k: v for k, v in kernel.constants.items() if k in reference.constants}}
    reply, arrays = run_step(reference, "reference", dict(zip(names, args)),
                             function=reference.name, args=names, keywords=keywords,
                             constants=module)
    if reply["outputs"] != len(outputs):
        raise UsageError(f"reference returned {reply['outputs']} arrays for the {len(outputs)} "
                         f"outputs {[p.name for p in outputs]}")
    return {p.name: arrays[f"out{i}"] for i, p in enumerate(outputs)}


def random_input(rng, tensor_type, symbols) -> np.ndarray:
    from argus.interp.machine import round_to_bf16, round_to_e4m3, round_to_fp16

    shape = concrete_shape(tensor_type, symbols)
    dtype = str(tensor_type.dtype)
    if dtype == "int32":
        return rng.integers(-100, 100, shape).astype(np.int32)
    values = rng.standard_normal(shape).astype(np.float32)
    rounding = {"bf16": round_to_bf16, "fp16": round_to_fp16, "fp8e4m3": round_to_e4m3}
    return rounding[dtype](values) if dtype in rounding else values


def compare(name: str, dtype: str, got: np.ndarray, want: np.ndarray) -> bool:
    """Elementwise |got - want| <= tol * (|want| + max|want|); NaN in `got` always fails."""
    got = np.asarray(got, np.float64)
    if got.shape != want.shape:
        print(f"  {name}: shape {got.shape}, reference {want.shape}")
        return False
    tol = TOLERANCE.get(dtype, 1e-5)
    scale = float(np.abs(want).max()) if want.size else 0.0
    error = np.abs(got - want)
    bad = ~(error <= tol * (np.abs(want) + scale))   # NaN compares False, so it is bad
    nans = int(np.isnan(got).sum())
    worst = float(np.nanmax(error)) if nans < got.size else float("nan")
    print(f"  {name} ({dtype}): max abs error {worst:.3g} (max |ref| {scale:.3g}, "
          f"tolerance {tol:.3g} relative), {int(bad.sum())} of {got.size} elements off"
          + (f", {nans} NaN (never written?)" if nans else ""))
    return not bad.any()


def tensor_params(kernel):
    """The kernel's global tensor parameters, in order."""
    return [p for p in kernel.params if isinstance(p.type, GlobalTensorType)]


def concrete_shape(tensor_type, symbols) -> tuple[int, ...]:
    """The tensor's shape with its symbols bound."""
    return tuple(d if isinstance(d, int) else symbols[d] for d in tensor_type.shape)
