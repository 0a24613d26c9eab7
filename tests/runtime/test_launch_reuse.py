"""A launch on tensors already launched on reuses their checked parameters (the host time
per call decides whether a ~50 us kernel keeps the GPU busy); anything that changes what the
checks or the parameters depend on (address, dtype, shape, strides) prepares afresh. The
driver is stubbed: what is counted is what the launcher asks of it and of its checks."""

import pytest

torch = pytest.importorskip("torch")

from argus.codegen import generate  # noqa: E402
from argus.ops.library import kernel_ir  # noqa: E402
from argus.runtime import launch  # noqa: E402
from argus.runtime.launch_errors import DriverError, LaunchError  # noqa: E402


class _Map:
    def getPtr(self):
        return 0


@pytest.fixture()
def stubbed(monkeypatch):
    from cuda.bindings import driver

    ir = kernel_ir("gemm", "gemm_nt")
    lau = launch.Launcher(generate(ir), b"", ir)
    calls = {"launch": [], "bind": 0, "encode": 0}
    real_bind = lau.bind

    def bind(tensors):
        calls["bind"] += 1
        try:
            return real_bind(tensors)
        except LaunchError as err:          # CPU tensors: only the device check fails
            if "move it to the GPU" not in str(err):
                raise
        sizes = {"M": tensors[0].shape[0], "K": tensors[0].shape[1], "N": tensors[1].shape[0]}
        return dict(zip(("A", "B", "C"), tensors)), sizes

    def encode(*args):
        calls["encode"] += 1
        return _Map()

    class Stream:
        cuda_stream = 7

    monkeypatch.setattr(lau, "bind", bind)
    monkeypatch.setattr(launch.TensorMapCache, "get", lambda self, *a: encode(*a))
    monkeypatch.setattr(launch, "current_stream_handle", lambda torch: Stream.cuda_stream)
    lau._function, lau._success = object(), driver.CUresult.CUDA_SUCCESS
    lau._launch = lambda *a: (calls["launch"].append(a) or (driver.CUresult.CUDA_SUCCESS,))
    return lau, calls


def bf16(*shape):
    return torch.zeros(shape, dtype=torch.bfloat16)


def test_the_same_tensors_launch_again_without_checks_or_encoding(stubbed):
    lau, calls = stubbed
    a, b, c = bf16(200, 72), bf16(264, 72), bf16(200, 264)
    for _ in range(3):
        lau(a, b, c)
    maps = sum(p.kind == "tensormap" for p in lau.gen.params)       # A's and B's
    assert maps == 2 and calls["bind"] == 1 and calls["encode"] == maps
    assert len(calls["launch"]) == 3
    configs = {id(x[0]) for x in calls["launch"]}
    params = {x[2] for x in calls["launch"]}
    assert len(configs) == 1 and len(params) == 1
    assert calls["launch"][0][0].gridDimX == 132 and calls["launch"][0][0].hStream is not None


@pytest.mark.parametrize("change", ["address", "shape", "strides", "dtype"])
def test_a_changed_tensor_is_checked_again(stubbed, change):
    lau, calls = stubbed
    a, b, c = bf16(200, 72), bf16(264, 72), bf16(200, 264)
    lau(a, b, c)
    other = {"address": bf16(200, 72), "shape": bf16(192, 72),
             "strides": bf16(72, 200).t(), "dtype": torch.zeros(200, 72, dtype=torch.float16)}
    if change in ("strides", "dtype"):
        with pytest.raises(LaunchError):
            lau(other[change], b, c)
    else:
        lau(other[change], b, bf16(other[change].shape[0], 264))
        assert len({x[2] for x in calls["launch"]}) == 2
    assert calls["bind"] == 2


def test_a_driver_error_names_the_kernel(stubbed):
    from cuda.bindings import driver
    lau, _ = stubbed
    lau._launch = lambda *a: (driver.CUresult.CUDA_ERROR_INVALID_VALUE,)
    with pytest.raises(DriverError, match="launching gemm_nt failed: CUDA_ERROR_INVALID_VALUE"):
        lau(bf16(200, 72), bf16(264, 72), bf16(200, 264))


def test_a_keyed_launch_prepares_once_per_key(stubbed):
    """launch_keyed (argus.ops.matmul's path): the tensors are asked for, checked and
    encoded only when the caller's key is new; a kept key launches with its parameters."""
    lau, calls = stubbed
    a, b, c = bf16(200, 72), bf16(264, 72), bf16(200, 264)
    asked = []

    def tensors():
        asked.append(1)
        return a, b, c
    for key in ("one", "one", "two", "one"):
        lau.launch_keyed(("test", key), tensors)
    assert len(asked) == 2 and calls["bind"] == 2 and len(calls["launch"]) == 4
