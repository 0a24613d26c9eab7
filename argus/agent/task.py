"""What the agent optimises: an operation at one problem size."""
from __future__ import annotations

import re
from dataclasses import dataclass

DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float8": 1}
DTYPE_ALIASES = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp8": "float8",
                 "e4m3": "float8"}

_SHAPE = re.compile(r"^\s*(\d+)\s*[x,]\s*(\d+)\s*[x,]\s*(\d+)\s*$")


class TaskError(ValueError):
    """A task the agent cannot take: the message says which part and how to write it."""


@dataclass(frozen=True)
class GemmTask:
    """C[M, N] = A[M, K] @ B[K, N] (bf16 inputs, fp32 accumulation, output in `dtype`)."""
    M: int
    N: int
    K: int
    dtype: str = "bfloat16"
    op: str = "gemm"

    def __post_init__(self) -> None:
        for name in ("M", "N", "K"):
            value = getattr(self, name)
            if not isinstance(value, int) or value <= 0 or value > 1 << 20:
                raise TaskError(f"{name}={value!r}: each GEMM size must be an integer in "
                                f"1..{1 << 20}")
        if self.dtype not in DTYPE_BYTES:
            raise TaskError(f"dtype {self.dtype!r} is not supported; use one of "
                            f"{sorted(DTYPE_BYTES)}")

    @property
    def flops(self) -> float:
        return 2.0 * self.M * self.N * self.K

    @property
    def element_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    @property
    def min_bytes(self) -> float:
        """Compulsory traffic: read A and B once, write C once."""
        e = self.element_bytes
        return float(e * (self.M * self.K + self.K * self.N) + 2 * self.M * self.N)

    @property
    def shape_text(self) -> str:
        return f"{self.M}x{self.N}x{self.K}"

    def shape_class(self) -> list[str]:
        """Coarse classes the knowledge base keys on (a shape may be in several)."""
        classes = []
        small = min(self.M, self.N)
        if small <= 256:
            classes.append("skinny")
        if self.K >= 4 * max(self.M, self.N):
            classes.append("deep-k")
        if self.M * self.N <= 1024 * 1024:
            classes.append("small-mn")
        if self.M >= 2048 and self.N >= 2048 and self.K >= 1024:
            classes.append("large")
        return classes or ["medium"]

    def describe(self) -> dict:
        return {"op": self.op, "M": self.M, "N": self.N, "K": self.K, "dtype": self.dtype,
                "flops": self.flops, "shape_class": self.shape_class()}


def parse_gemm_shape(text: str, dtype: str = "bfloat16") -> GemmTask:
    """'4096x4096x4096' (M x N x K) -> GemmTask; anything else names the expected form."""
    match = _SHAPE.match(text or "")
    if not match:
        raise TaskError(f"shape {text!r} is not MxNxK; write e.g. --shape 4096x4096x4096")
    dtype = DTYPE_ALIASES.get(dtype, dtype)
    M, N, K = (int(g) for g in match.groups())
    return GemmTask(M, N, K, dtype)
