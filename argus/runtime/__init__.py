"""Build, cache and inspect compiled kernels (the launch side lives beside these modules)."""

from argus.runtime.build import BuildError, BuildOptions, build_kernel, compile_cubin
from argus.runtime.cache import CacheEntry, KernelCache
from argus.runtime.resources import ResourceReport, check_kernel_binary, parse_ptxas_report

__all__ = ["BuildError", "BuildOptions", "build_kernel", "compile_cubin", "CacheEntry", "KernelCache",
           "ResourceReport", "check_kernel_binary", "parse_ptxas_report"]
