"""cuLaunchKernelEx called through ctypes on libcuda, with its CUlaunchConfig built once per
(grid, stream): the cuda-python binding converts its config object on every call (about
5 us of host time per launch on the H200's host), a ctypes call with prebuilt arguments
about 1 us. The structures are the driver API's (cuda.h, CUDA 12 and 13):

    CUlaunchConfig { unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                     sharedMemBytes; CUstream hStream; CUlaunchAttribute *attrs;
                     unsigned numAttrs; }
    CUlaunchAttribute { CUlaunchAttributeID id; char pad[4]; CUlaunchAttributeValue value; }
    CUlaunchAttributeValue: a union of 64 bytes; clusterDim is its first three unsigneds.

`DriverLauncher.load()` is None where libcuda cannot be opened by ctypes: the caller keeps
the binding's path."""

from __future__ import annotations

import ctypes

CLUSTER_DIMENSION = 4          # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
PROGRAMMATIC_SERIALIZATION = 6  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION


class LaunchAttribute(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4),
                ("value", ctypes.c_uint * 16)]


class LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint),
                ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)), ("numAttrs", ctypes.c_uint)]


assert ctypes.sizeof(LaunchAttribute) == 72 and ctypes.sizeof(LaunchConfig) == 56


class DriverLauncher:
    """One kernel function's launches: `launch(config, params_address)` -> CUresult int."""

    def __init__(self, lib, function_handle: int):
        self._fn = lib.cuLaunchKernelEx
        self._fn.restype = ctypes.c_int
        self._fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_void_p]
        self._handle = ctypes.c_void_p(function_handle)

    @staticmethod
    def load(function_handle: int) -> "DriverLauncher | None":
        for name in ("libcuda.so.1", "libcuda.so"):
            try:
                lib = ctypes.CDLL(name)
                getattr(lib, "cuLaunchKernelEx")
            except (OSError, AttributeError):
                continue
            return DriverLauncher(lib, function_handle)
        return None

    @staticmethod
    def config(grid, block: int, smem: int, stream: int, cluster,
               programmatic: bool = False) -> tuple:
        """(the config's address, what keeps it alive). `programmatic`: the launch may start
        while the stream's previous kernel drains (programmatic dependent launch; every
        generated kernel waits for it at its first line, argus_grid_dependency.cuh)."""
        config = LaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = grid
        config.blockDimX, config.blockDimY, config.blockDimZ = block, 1, 1
        config.sharedMemBytes = smem
        config.hStream = stream or None
        attrs = (LaunchAttribute * 2)()
        n = 0
        if tuple(cluster) != (1, 1, 1):
            attrs[n].id = CLUSTER_DIMENSION
            attrs[n].value[0], attrs[n].value[1], attrs[n].value[2] = cluster
            n += 1
        if programmatic:
            attrs[n].id = PROGRAMMATIC_SERIALIZATION
            attrs[n].value[0] = 1          # programmaticStreamSerializationAllowed
            n += 1
        config.numAttrs = n
        if n:
            config.attrs = ctypes.cast(attrs, ctypes.POINTER(LaunchAttribute))
        return ctypes.addressof(config), (config, attrs)

    def launch(self, config_address: int, params_address: int) -> int:
        return self._fn(config_address, self._handle, params_address, None)
