"""The matmul problem with its inputs drawn on the device: the search mode's inputs.

The harness (argus.bench.inputs.Sampler) draws every input in float64 on the CPU and moves
it, so that a check is reproducible from its seed on any device. On the H200 run of
2026-12-02 that was nearly the whole cost of an evaluation: ~28 ns per element per input
set, 6 sets per evaluation, 23 s of the 23 s an 8192^3 evaluation took. Here the same two
distributions (argus.bench.inputs: unit normal; "wide" = (8 N(0,1) + 2) x a per-row
2^U(-3, 3) scale) are drawn by a generator on the device itself, seeded from the check's
seed, in float32 and rounded to the problem's dtype: fresh values for every check, never
zeros, milliseconds instead of seconds. What changes: the values of a seed differ from the
CPU sampler's (reproducible on the same kind of device, not across devices). What does
not: poisoned outputs, the float64 reference of the inputs upcast, the comparison with the
peer's own error (argus.bench.oracle), all of which this problem leaves to the harness.
"""
from __future__ import annotations

import torch

from argus.bench.problems import MatmulProblem, parse_dtype


def draw(shape: tuple, dtype: torch.dtype, seed: int, distribution: str, device: str,
         magnitude: float = 1.0) -> torch.Tensor:
    """One tensor of `shape` drawn on `device` from `distribution` ("normal" or "wide")."""
    generator = torch.Generator(device=device).manual_seed(int(seed))
    base = torch.randn(shape, generator=generator, dtype=torch.float32, device=device)
    if distribution == "wide":
        rows = shape[0]
        log_scale = torch.empty(rows, dtype=torch.float32, device=device).uniform_(
            -3.0, 3.0, generator=generator)
        scale = torch.exp2(log_scale).reshape((rows,) + (1,) * (len(shape) - 1))
        base = (8.0 * base + 2.0) * scale * float(magnitude)
    elif distribution != "normal":
        raise ValueError(f"unknown input distribution {distribution!r}; use 'normal' or 'wide'")
    return base.to(dtype)


class DeviceDrawnMatmul(MatmulProblem):
    """MatmulProblem whose `make_inputs` draws on the sampler's device (see the module
    docstring); everything else, the reference and the peer included, is the harness's."""

    def make_inputs(self, sampler) -> tuple:
        mag = self._wide_magnitude()
        b_shape = (self.k, self.n) if self.b_layout == "kn" else (self.n, self.k)
        # two seeds from the check's one, so A and B are independent draws
        a = draw((self.m, self.k), self.dtype, 2 * int(sampler.seed), sampler.distribution,
                 sampler.device, mag)
        b = draw(b_shape, self.dtype, 2 * int(sampler.seed) + 1, sampler.distribution,
                 sampler.device, mag)
        return (a, b)

    def describe(self) -> dict:
        return {**super().describe(), "inputs": "drawn on the device (search mode)"}


def matmul(m: int, n: int, k: int, dtype="bfloat16", out_dtype=None,
           b_layout="kn") -> DeviceDrawnMatmul:
    """Factory for job specs (`argus.agent.evaluators.device_inputs:matmul`), with the
    arguments of argus.bench.problems:matmul."""
    return DeviceDrawnMatmul(int(m), int(n), int(k), parse_dtype(dtype),
                             None if out_dtype is None else parse_dtype(out_dtype), b_layout)
