"""The Hopper backend: IR -> CUDA C++ for sm_90a (`generate`), built by argus.runtime."""

from .errors import CodegenError
from .kernel import GeneratedKernel, generate

__all__ = ["CodegenError", "GeneratedKernel", "generate"]
