"""The launcher's input checks, which run before anything touches a GPU: each bad input
gets a sentence saying what to change. (The launch itself is exercised on the H200 by
benchmarks/gemm.py; see docs/perf-log.md.)"""

import pytest

torch = pytest.importorskip("torch")

from argus.codegen import generate  # noqa: E402
from argus.ops.library import kernel_ir  # noqa: E402
from argus.runtime.launch import Launcher  # noqa: E402
from argus.runtime.launch_errors import LaunchError  # noqa: E402

from pathlib import Path  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def nt():
    ir = kernel_ir("gemm", "gemm_nt")
    return Launcher(generate(ir), b"", ir)


@pytest.fixture(scope="module")
def assuming():
    from argus.frontend import parse_file
    ir = parse_file(EXAMPLES / "gemm.py")["gemm"]
    return Launcher(generate(ir), b"", ir)


def bf16(*shape):
    return torch.zeros(shape, dtype=torch.bfloat16)


def test_good_inputs_bind_their_sizes_and_only_the_device_is_missing(nt):
    with pytest.raises(LaunchError, match="A is on cpu; move it to the GPU"):
        nt.bind((bf16(200, 72), bf16(264, 72), bf16(200, 264)))


@pytest.mark.parametrize("tensors, message", [
    ((bf16(4, 8), bf16(8, 8)), "takes 3 tensors"),
    ((bf16(4, 8), bf16(8, 8), torch.zeros(4, 8)), "C must be bf16, got torch.float32"),
    ((bf16(4, 8), bf16(8, 8), bf16(4, 8, 1)), "C must be 2-D"),
    ((bf16(4, 8), bf16(8, 16), bf16(4, 8)), "dimension 1 is K = 16, but another tensor has K = 8"),
    ((bf16(8, 4).t(), bf16(8, 8), bf16(4, 8)), "contiguous row-major"),
    ((bf16(4, 8), [1, 2], bf16(4, 8)), "must be a torch tensor or a DLPack array"),
])
def test_bad_inputs_are_refused_with_a_fix(nt, tensors, message):
    with pytest.raises(LaunchError, match=message):
        nt.bind(tensors)


def test_unaligned_tensor_is_refused(nt):
    base = bf16(4 * 8 + 1)
    with pytest.raises(LaunchError, match="not 16-byte aligned"):
        nt.bind((base[1:].view(4, 8), bf16(8, 8), bf16(4, 8)))


def test_a_kernel_assumption_is_checked_with_its_line(assuming):
    with pytest.raises(LaunchError, match=r"gemm.py:28: the kernel assumes \(\(M % 128\) == 0\)"):
        assuming.bind((bf16(100, 64), bf16(256, 64), bf16(100, 256)))


def test_dlpack_arrays_are_accepted_like_tensors(nt):
    class Foreign:                       # any object speaking DLPack
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kw):
            return self.t.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    with pytest.raises(LaunchError, match="is on cpu"):   # converted, then only the device
        nt.bind((Foreign(bf16(4, 8)), bf16(8, 8), bf16(4, 8)))
