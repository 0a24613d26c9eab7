"""What some device wrappers do, checked on a GPU (skipped without one): ldmatrix/stmatrix
layouts, elect_one_sync, mbarrier phases. Launched through the driver API with ctypes, so the
check does not depend on the runtime's launch layer."""

import ctypes

import numpy as np
import pytest

from argus.runtime import BuildOptions, build_kernel
from runtime_kernels import kernel_source

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
    pytest.skip("needs an sm_90 GPU", allow_module_level=True)


class Module:
    """A cubin loaded into torch's current context."""

    def __init__(self, cubin: bytes):
        torch.zeros(1, device="cuda")
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.handle = ctypes.c_void_p()
        self._ok(self.cuda.cuModuleLoadData(ctypes.byref(self.handle), cubin), "cuModuleLoadData")

    def _ok(self, rc, what):
        assert rc == 0, f"{what} failed with CUresult {rc}"

    def launch(self, name: str, grid: int, block: int, *args):
        fn = ctypes.c_void_p()
        self._ok(self.cuda.cuModuleGetFunction(ctypes.byref(fn), self.handle, name.encode()), name)
        holders = [ctypes.c_uint64(a.data_ptr()) if isinstance(a, torch.Tensor) else ctypes.c_int(a) for a in args]
        params = (ctypes.c_void_p * len(holders))(*[ctypes.cast(ctypes.byref(h), ctypes.c_void_p) for h in holders])
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self._ok(self.cuda.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, stream, params, None), "launch")
        torch.cuda.synchronize()


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    from argus.runtime import KernelCache

    entry = build_kernel(kernel_source("wrappers_on_gpu.cu"), BuildOptions(), KernelCache(tmp_path_factory.mktemp("c")))
    return Module(entry.cubin)


def _blocks(values: np.ndarray) -> np.ndarray:
    return values.reshape(4, 8, 8)  # four 8x8 matrices, rows of 8


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_ldmatrix_stmatrix(module, mode):
    data = np.arange(32 * 8, dtype=np.uint16)
    src = torch.from_numpy(data.astype(np.int16)).cuda()
    out = torch.zeros_like(src)
    module.launch("ldst_matrix", 1, 32, src, out, mode)
    got = out.cpu().numpy().astype(np.uint16)
    want = data if mode in (0, 1) else _blocks(data).transpose(0, 2, 1).reshape(-1)
    np.testing.assert_array_equal(got, want)


def test_elect_one_sync_picks_one_lane_per_warp(module):
    counts = torch.zeros(8, dtype=torch.int32, device="cuda")
    module.launch("elect_count", 1, 256, counts)
    assert counts.tolist() == [1] * 8


def test_mbarrier_phases_complete_after_every_arrival(module):
    arrived = torch.full((512,), -1, dtype=torch.int32, device="cuda")
    flags = torch.zeros(512, dtype=torch.int32, device="cuda")
    module.launch("mbarrier_phases", 1, 256, arrived, flags)
    arrived = arrived.cpu().numpy()
    assert (arrived[:256] >= 256).all() and (arrived[256:] >= 512).all()
    assert flags.cpu().numpy().tolist() == [1] * 512
