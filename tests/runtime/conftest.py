"""Session-wide builds of the test kernels, so each slow compile happens once per test run."""

import pytest

from argus.runtime import BuildOptions, KernelCache, build_kernel
from runtime_kernels import HAVE_NVCC, HAVE_NVRTC, kernel_source


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> KernelCache:
    """One cache for the whole test session (shared by name with tests/codegen)."""
    return KernelCache(tmp_path_factory.getbasetemp() / "argus-session-cache")


@pytest.fixture(scope="session")
def every_wrapper_nvcc(session_cache):
    if not HAVE_NVCC:
        pytest.skip("nvcc is not on PATH")
    return build_kernel(kernel_source("every_wrapper.cu"), BuildOptions(compiler="nvcc"), session_cache)


@pytest.fixture(scope="session")
def every_wrapper_nvrtc(session_cache):
    if not HAVE_NVRTC:
        pytest.skip("cuda-python's NVRTC does not load")
    return build_kernel(kernel_source("every_wrapper.cu"), BuildOptions(compiler="nvrtc"), session_cache)


@pytest.fixture(scope="session")
def spilling_nvcc(session_cache):
    if not HAVE_NVCC:
        pytest.skip("nvcc is not on PATH")
    return build_kernel(kernel_source("spills.cu"), BuildOptions(compiler="nvcc", max_registers=32), session_cache)


@pytest.fixture(scope="session")
def serialized_wgmma_nvcc(session_cache):
    """every_wrapper with bounded waits: the printf call inside the wgmma pipeline serializes it."""
    if not HAVE_NVCC:
        pytest.skip("nvcc is not on PATH")
    options = BuildOptions(compiler="nvcc", defines=(("ARGUS_MBARRIER_WAIT_LIMIT", "1000000"),))
    return build_kernel(kernel_source("every_wrapper.cu"), options, session_cache)


@pytest.fixture(scope="session")
def uncapped_setmaxnreg_nvcc(session_cache):
    if not HAVE_NVCC:
        pytest.skip("nvcc is not on PATH")
    return build_kernel(kernel_source("setmaxnreg_uncapped.cu"), BuildOptions(compiler="nvcc"), session_cache)
