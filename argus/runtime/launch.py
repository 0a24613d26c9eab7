"""Launching a generated kernel on torch tensors (or DLPack arrays), on the current stream.

`Launcher(generated, cubin)(*tensors)` binds the tensors to the kernel's global-tensor
parameters in order (and an int to each size parameter, `SQ: Dim`), reads the shape symbols
off them (a symbol given twice must agree),
checks dtype, device, layout and 16-byte alignment, checks the kernel's `assume`s, fetches
cached tensor maps and launches with cuLaunchKernelEx (cluster dims and dynamic shared
memory set), called through ctypes with a prebuilt config (driver_launch.py; the
cuda-python call where libcuda cannot be opened so, or with ARGUS_LAUNCH_BINDING=1). Everything that can be prepared once is prepared once: the checks, tensor maps
and parameter array of a set of tensors are kept per (address, dtype, shape, strides) of
each, so launching on the same tensors again costs a lookup and the driver call (the host
time per call decides whether a ~50 us kernel keeps the GPU busy).
"""

from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass

from .arguments import TensorParam, bind_arguments, launch_params
from .driver_launch import DriverLauncher
from .launch_errors import DriverError, LaunchError
from .tensor_maps import TensorMapCache


_THREAD = threading.local()
_torch = None      # the torch module, once a launch has imported it (_import_torch)


def _import_torch():
    global _torch
    import torch
    _torch = torch
    return torch


def make_context_current(torch) -> None:
    """Make the current device's primary context (torch's) current on this thread. torch
    sets it on the threads it launches from, not on every thread that reaches us: the
    autograd engine runs a backward on a worker thread of its own, where the driver
    calls would otherwise fail with CUDA_ERROR_INVALID_CONTEXT."""
    device = torch._C._cuda_getDevice()      # torch.cuda.current_device() without its checks
    if getattr(_THREAD, "device", None) == device:
        return
    from cuda.bindings import driver
    ctx = _ok(driver.cuCtxGetCurrent(), "reading this thread's CUDA context")
    if not int(ctx):
        dev = _ok(driver.cuDeviceGet(device), f"finding CUDA device {device}")
        primary = _ok(driver.cuDevicePrimaryCtxRetain(dev), "taking the primary context")
        _ok(driver.cuCtxSetCurrent(primary), "making the primary context current")
    _THREAD.device = device


def current_stream_handle(torch) -> int:
    """The current stream's CUstream handle, without building a torch.cuda.Stream object
    per call (host time per launch matters: issue 18)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is None:
        return torch.cuda.current_stream().cuda_stream
    return raw(torch._C._cuda_getDevice())


def _ok(result, what: str):
    from cuda.bindings import driver
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise DriverError(f"{what} failed: {err.name}")
    return rest[0] if len(rest) == 1 else rest


def require_hopper(torch) -> None:
    if not torch.cuda.is_available():
        raise LaunchError("no CUDA GPU is visible; Argus kernels run on NVIDIA Hopper (sm_90) "
                          "GPUs; on a machine without one, set ARGUS_INTERPRET=1 to run them "
                          "on the CPU interpreter (`argus run --interpret` on the command line)")
    cap = torch.cuda.get_device_capability()
    if cap != (9, 0):
        name = torch.cuda.get_device_name()
        raise LaunchError(f"{name} is sm_{cap[0]}{cap[1]}; Argus kernels use wgmma and TMA of "
                          "sm_90a and run only on Hopper GPUs (H100, H200)")


class Launcher:
    def __init__(self, generated, cubin: bytes, kernel_ir=None):
        self.gen = generated
        self.cubin = cubin
        self.ir = kernel_ir
        self._function = None
        self._maps = TensorMapCache()
        # the IR's tensor parameters (dtype, shape) are what bind checks; without the IR,
        # only the count of the generated kernel's pointer parameters is known
        self._params = launch_params(kernel_ir) if kernel_ir is not None else [
            TensorParam(p.source, "", None) for p in generated.params if p.kind == "pointer"]
        # tensors reached only through tensor maps (which carry the row pitch) may be
        # row-strided views; a tensor the code addresses by pointer must be contiguous
        by_pointer = {p.source for p in generated.params
                      if p.kind == "pointer" and getattr(p, "addressed", True)}
        self._strided = frozenset(p.tensormap.tensor for p in generated.params
                                  if p.kind == "tensormap") - by_pointer
        self._assumptions = [(compile(text, where, "eval"), text, where)
                             for text, where in generated.assumptions]
        self._grid = [compile(g, "<grid>", "eval") for g in generated.grid]
        self._prepared: dict[tuple, _Prepared] = {}     # oldest first
        self._configs: dict[tuple, object] = {}          # (grid, stream) -> CUlaunchConfig
        self._context = lambda torch: None    # make_context_current, once _load has a module
        self._driver = None     # the ctypes launch path (driver_launch.py), once loaded
        self._driver_configs: dict[tuple, tuple] = {}   # (grid, stream) -> (address, keep)
        self._programmatic = False    # ARGUS_PDL=1, read by _load

    # ---- once per process ---------------------------------------------------------------
    def _load(self):
        import torch
        from cuda.bindings import driver

        require_hopper(torch)
        make_context_current(torch)
        self._context = make_context_current
        module = _ok(driver.cuModuleLoadData(self.cubin), f"loading {self.gen.name}")
        fn = _ok(driver.cuModuleGetFunction(module, self.gen.name.encode()),
                 f"finding {self.gen.name}")
        if self.gen.smem_bytes > 48 * 1024:
            _ok(driver.cuFuncSetAttribute(
                fn, driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                self.gen.smem_bytes), "setting the dynamic shared memory size")
        if self.gen.blocks_per_sm > 1:    # all of the SM's memory as shared memory, so that
            _ok(driver.cuFuncSetAttribute(  # the blocks fit beside each other (a hint)
                fn, driver.CUfunction_attribute.CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                100), "setting the shared memory carveout")
        self._module, self._function = module, fn
        self._launch, self._success = driver.cuLaunchKernelEx, driver.CUresult.CUDA_SUCCESS
        if not os.environ.get("ARGUS_LAUNCH_BINDING"):     # 1: the cuda-python call instead
            self._driver = DriverLauncher.load(int(fn))
        # 1: programmatic dependent launch (read once a kernel, at its first launch): the
        # kernel may start while the stream's previous kernel drains, and waits for it at
        # its first line (every generated kernel does, argus_grid_dependency.cuh)
        self._programmatic = os.environ.get("ARGUS_PDL") == "1"

    # ---- per launch ---------------------------------------------------------------------
    def bind(self, tensors) -> tuple[dict, dict]:
        """({name: tensor}, {symbol: size}) after the shared checks (arguments.py), the
        16-byte alignment TMA needs, the kernel's `assume`s and, last, the device."""
        bound, sizes = bind_arguments(self.gen.name, self._params, tensors,
                                      strided=self._strided)
        for name, t in bound.items():
            if t.data_ptr() % 16:
                raise LaunchError(f"{name} is not 16-byte aligned; use a fresh tensor")
        for code, text, where in self._assumptions:
            if not eval(code, {}, dict(sizes)):
                shown = ", ".join(f"{k}={v}" for k, v in sizes.items())
                raise LaunchError(f"{where}: the kernel assumes {text}, which does not hold for "
                                  f"{shown}; pad the inputs or use a kernel that handles tails")
        for name, t in bound.items():   # last, so the checks above also run on a CPU
            if not t.is_cuda:
                raise LaunchError(f"{name} is on {t.device}; move it to the GPU (.cuda())")
        return bound, sizes

    def __call__(self, *tensors, grid: tuple[int, ...] | None = None):
        self._run(_signature(tensors, grid), lambda: tensors, grid)

    def launch_keyed(self, key: tuple, tensors) -> None:
        """A launch on `tensors()` whose signature the caller worked out from what it had
        already read of them (argus.ops.matmul's checks read every shape and stride): the
        key must fix all that _signature does (each tensor's address, dtype, shape,
        strides and device) and differ from every _signature (a leading tag); `tensors` is
        called only when the key is new (the checks and the parameters then made)."""
        self._run(key, tensors, None)

    def _run(self, key, tensors, grid) -> None:
        torch = _torch or _import_torch()
        if self._function is None:
            self._load()
        else:
            self._context(torch)
        prepared = self._prepared.get(key) if key is not None else None
        if prepared is None:
            prepared = self._prepare(tensors(), grid)
            if key is not None:
                if len(self._prepared) >= PREPARED_LIMIT:
                    self._prepared.pop(next(iter(self._prepared)))
                self._prepared[key] = prepared
        stream = current_stream_handle(torch)
        if self._driver is not None:
            entry = self._driver_configs.get((prepared.grid, stream))
            if entry is None:
                entry = self._driver_configs[(prepared.grid, stream)] = self._driver.config(
                    prepared.grid, self.gen.block, self.gen.smem_bytes, stream,
                    self.gen.cluster, self._programmatic)
            err = self._driver.launch(entry[0], prepared.address)
            if err:
                from cuda.bindings import driver
                raise DriverError(f"launching {self.gen.name} failed: "
                                  f"{driver.CUresult(err).name}")
            return
        config = self._configs.get((prepared.grid, stream))
        if config is None:
            config = self._configs[(prepared.grid, stream)] = self._config(prepared.grid, stream)
        err = self._launch(config, self._function, prepared.address, 0)[0]
        if err != self._success:
            raise DriverError(f"launching {self.gen.name} failed: {err.name}")

    def _prepare(self, tensors, grid) -> "_Prepared":
        """Checks, tensor maps and the parameter array of one set of tensors (kept: the
        driver reads the parameters at launch, and the same tensors launch again)."""
        bound, sizes = self.bind(tensors)
        holders = []
        for p in self.gen.params:
            if p.kind == "pointer":
                holders.append(ctypes.c_uint64(bound[p.source].data_ptr()))
            elif p.kind == "size":
                holders.append(ctypes.c_int(sizes[p.source]))
            else:
                t = bound[p.tensormap.tensor]
                rows, cols = t.shape
                holders.append(self._maps.get(p.tensormap, t.data_ptr(), rows, cols,
                                              t.stride(0) * t.element_size()))
        addresses = (ctypes.c_void_p * len(holders))()
        for i, h in enumerate(holders):
            addresses[i] = h.getPtr() if hasattr(h, "getPtr") else ctypes.addressof(h)
        if grid is None:
            env = dict(sizes, **(self.ir.constants if self.ir is not None else {}))
            grid = tuple(int(eval(g, {}, env)) for g in self._grid)
        grid = tuple(grid) + (1,) * (3 - len(grid))
        return _Prepared(grid, ctypes.addressof(addresses), (holders, addresses))

    def _config(self, grid, stream):
        from cuda.bindings import driver

        config = driver.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = grid
        config.blockDimX, config.blockDimY, config.blockDimZ = self.gen.block, 1, 1
        config.sharedMemBytes = self.gen.smem_bytes
        config.hStream = stream
        attrs = []
        if tuple(self.gen.cluster) != (1, 1, 1):
            attr = driver.CUlaunchAttribute()
            attr.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
            attr.value.clusterDim.x, attr.value.clusterDim.y, attr.value.clusterDim.z = \
                self.gen.cluster
            attrs.append(attr)
        if self._programmatic:
            attr = driver.CUlaunchAttribute()
            attr.id = (driver.CUlaunchAttributeID
                       .CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
            attr.value.programmaticStreamSerializationAllowed = 1
            attrs.append(attr)
        config.attrs = attrs
        config.numAttrs = len(attrs)
        return config


PREPARED_LIMIT = 64     # sets of tensors whose launch parameters a launcher keeps


@dataclass(frozen=True)
class _Prepared:
    grid: tuple[int, int, int]
    address: int          # of the array of parameter addresses
    keep: tuple           # what those addresses point into


def _signature(tensors, grid):
    """What the checks and the parameters of a launch depend on, for torch tensors: address,
    dtype, shape, strides and device kind of each, and the value of each int (a size
    parameter); None for other arrays: always checked."""
    import torch

    key = [grid]
    for t in tensors:
        if type(t) is int:
            key.append(t)
            continue
        if type(t) is not torch.Tensor:
            return None
        key.append((t.data_ptr(), t.dtype, t.shape, t.stride(), t.is_cuda))
    return tuple(key)
