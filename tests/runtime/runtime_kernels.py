"""Where the runtime tests' kernels are and which CUDA tools this machine has (a uniquely named
module, so test files can import it whatever other conftest.py files the run collects)."""

from pathlib import Path

import pytest

from argus.runtime.toolchain import find_tool, nvrtc_identity

KERNELS = Path(__file__).parent / "kernels"
HAVE_NVCC = find_tool("nvcc") is not None
HAVE_NVRTC = nvrtc_identity() is not None
HAVE_DISASSEMBLER = bool(find_tool("cuobjdump") or find_tool("nvdisasm"))

requires_nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="nvcc is not on PATH")
requires_compiler = pytest.mark.skipif(not (HAVE_NVCC or HAVE_NVRTC), reason="neither nvcc nor NVRTC")
requires_nvrtc = pytest.mark.skipif(not HAVE_NVRTC, reason="cuda-python's NVRTC does not load")
requires_disassembler = pytest.mark.skipif(
    not HAVE_DISASSEMBLER, reason="neither cuobjdump nor nvdisasm found (pip install nvidia-cuda-cuobjdump)")


def kernel_source(name: str) -> str:
    return (KERNELS / name).read_text()
