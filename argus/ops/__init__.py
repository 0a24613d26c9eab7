"""Library operations on torch tensors, backed by DSL kernels compiled by Argus."""

from .matmul import matmul

__all__ = ["matmul"]
