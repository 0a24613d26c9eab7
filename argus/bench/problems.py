"""Problems: what an operation computes, how to draw its inputs, its fp64 reference.

A problem is the harness's whole knowledge of an operation. The calling convention of a
candidate and a peer is destination passing: `fn(inputs, outputs)` writes every element
of each tensor in `outputs` (allocated and poisoned by the harness) and returns nothing,
so unwritten elements are visible and the harness, not the candidate, owns the memory.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from argus.bench.inputs import Sampler

_DTYPES = {
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "float64": torch.float64,
}


def parse_dtype(name) -> torch.dtype:
    """torch dtype from a name such as "bfloat16" (or a dtype, returned as is)."""
    if isinstance(name, torch.dtype):
        return name
    key = str(name).replace("torch.", "")
    if key not in _DTYPES:
        raise ValueError(f"unknown dtype {name!r}; use one of {sorted(_DTYPES)}")
    return _DTYPES[key]


class Problem:
    """Interface every problem implements (subclass it; all methods are required)."""

    name: str = "problem"

    def make_inputs(self, sampler: Sampler) -> tuple:
        raise NotImplementedError

    def make_outputs(self, inputs: tuple) -> tuple:
        """Allocate (uninitialised) output tensors on the inputs' device."""
        raise NotImplementedError

    def reference(self, inputs64: tuple) -> tuple:
        """The outputs computed in float64 from the inputs upcast to float64."""
        raise NotImplementedError

    def peer(self, inputs: tuple, outputs: tuple) -> None:
        """The default peer (the library implementation a candidate is compared with)."""
        raise NotImplementedError

    def flops(self) -> float:
        raise NotImplementedError

    def bytes_moved(self) -> float:
        """The fewest bytes through device memory: each input read once, each output
        written once."""
        raise NotImplementedError

    def math_dtype(self) -> str:
        """Which roofline rate applies (a key of roofline.PEAKS' "flops" table)."""
        raise NotImplementedError

    def describe(self) -> dict:
        """Shapes and dtypes, for the results file."""
        raise NotImplementedError


@dataclass
class MatmulProblem(Problem):
    """C[M,N] = A[M,K] @ B, B given K x N ("kn", `x @ W`) or N x K ("nk", `x @ W.T`)."""

    m: int
    n: int
    k: int
    dtype: torch.dtype = torch.bfloat16
    out_dtype: torch.dtype | None = None
    b_layout: str = "kn"
    name: str = field(default="matmul")

    def __post_init__(self) -> None:
        self.dtype = parse_dtype(self.dtype)
        self.out_dtype = parse_dtype(self.out_dtype) if self.out_dtype is not None else self.dtype
        if self.b_layout not in ("kn", "nk"):
            raise ValueError(f"b_layout must be 'kn' (B is K x N) or 'nk' (B is N x K), "
                             f"got {self.b_layout!r}")
        for label, v in (("m", self.m), ("n", self.n), ("k", self.k)):
            if int(v) <= 0:
                raise ValueError(f"matmul {label} must be positive, got {v}")

    def _wide_magnitude(self) -> float:
        # fp16 overflows at 65504: keep the wide distribution's outputs near 1e4 at most
        # (its mean-term bound is about 90 * K at magnitude 1).
        # With B stored N x K ("nk") the per-row scale of the wide distribution lands on
        # output columns too, so one output can carry both scales (up to 8 * 8).
        if self.out_dtype == torch.float16 or self.dtype == torch.float16:
            row_scales = 64.0 if self.b_layout == "nk" else 1.0
            return min(1.0, math.sqrt(1e4 / (90.0 * self.k * row_scales)))
        return 1.0

    def make_inputs(self, sampler: Sampler) -> tuple:
        mag = self._wide_magnitude()
        a = sampler.floats((self.m, self.k), self.dtype, magnitude=mag)
        b_shape = (self.k, self.n) if self.b_layout == "kn" else (self.n, self.k)
        b = sampler.floats(b_shape, self.dtype, magnitude=mag)
        return (a, b)

    def make_outputs(self, inputs: tuple) -> tuple:
        return (torch.empty((self.m, self.n), dtype=self.out_dtype, device=inputs[0].device),)

    def _b_as_kn(self, b):
        return b if self.b_layout == "kn" else b.t()

    def reference(self, inputs64: tuple) -> tuple:
        a, b = inputs64
        return (a @ self._b_as_kn(b),)

    def peer(self, inputs: tuple, outputs: tuple) -> None:
        a, b = inputs
        if self.out_dtype == self.dtype:
            torch.matmul(a, self._b_as_kn(b), out=outputs[0])
        else:
            outputs[0].copy_(torch.matmul(a, self._b_as_kn(b)))

    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k

    def bytes_moved(self) -> float:
        size = torch.empty((), dtype=self.dtype).element_size()
        out_size = torch.empty((), dtype=self.out_dtype).element_size()
        return float(size * (self.m * self.k + self.k * self.n) + out_size * self.m * self.n)

    def math_dtype(self) -> str:
        return str(self.dtype).replace("torch.", "")

    def describe(self) -> dict:
        return {"op": "matmul", "m": self.m, "n": self.n, "k": self.k,
                "dtype": str(self.dtype).replace("torch.", ""),
                "out_dtype": str(self.out_dtype).replace("torch.", ""),
                "b_layout": self.b_layout}


def matmul(m: int, n: int, k: int, dtype="bfloat16", out_dtype=None, b_layout="kn") -> MatmulProblem:
    """Factory for job specs (`argus.bench.problems:matmul`)."""
    return MatmulProblem(int(m), int(n), int(k), parse_dtype(dtype),
                         None if out_dtype is None else parse_dtype(out_dtype), b_layout)
