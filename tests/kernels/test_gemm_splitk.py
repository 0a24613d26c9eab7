"""Split-K GEMM: the SPLIT partial sums of each tile, added with atomic_add into a zeroed
fp32 workspace, equal A @ B (both layouts, both interpreter modes, one or two consumer
warpgroups, a K that leaves the last split's final steps past K); it verifies without
errors and its binary reduces with REDG."""

import re

import numpy as np
import pytest

from argus.interp.evaluator import interpret
from argus.interp.machine.dtypes import BF16
from argus.ops.library import kernel_ir

NAMES = ["gemm_nt_splitk", "gemm_nn_splitk"]


def _bf16(rng, shape):
    return BF16.decode(BF16.encode(rng.standard_normal(shape).astype(np.float32)))


WGS = [{"WG": 2, "CONSUMERS": (1, 2)}, {"WG": 1, "CONSUMERS": (1,)}]


@pytest.mark.parametrize("wg", WGS, ids=["bm128", "bm64"])
@pytest.mark.parametrize("mode", ["value", "exact"])
@pytest.mark.parametrize("name", NAMES)
def test_partial_sums_meet_in_the_workspace(name, mode, wg):
    ir = kernel_ir("gemm_splitk", name, BLOCKS=3, SPLIT=3, **wg)
    rng = np.random.default_rng(11)
    m, n, k = 200, 264, 456              # KT = 8 k-steps, 3 splits of 3: one step past K
    a = _bf16(rng, (m, k))
    b = _bf16(rng, (n, k) if name == "gemm_nt_splitk" else (k, n))
    b64 = b.astype(np.float64).T if name == "gemm_nt_splitk" else b.astype(np.float64)
    ref = a.astype(np.float64) @ b64
    res = interpret(ir, {"A": a, "B": b, "W": np.zeros((m, n), np.float32)}, seed=4, mode=mode)
    assert res.ok, res.failures()
    got = np.asarray(res.outputs["W"], np.float64)
    assert np.isfinite(got).all()
    assert np.abs(got - ref).max() <= 1e-5 * np.abs(ref).max()


def test_a_workspace_not_zeroed_is_visibly_wrong():
    ir = kernel_ir("gemm_splitk", "gemm_nt_splitk", BLOCKS=2, SPLIT=2)
    rng = np.random.default_rng(1)
    a, b = _bf16(rng, (128, 128)), _bf16(rng, (256, 128))
    res = interpret(ir, {"A": a, "B": b, "W": np.ones((128, 256), np.float32)}, seed=0)
    got = np.asarray(res.outputs["W"], np.float64)
    assert np.allclose(got - 1.0, a.astype(np.float64) @ b.astype(np.float64).T, atol=1e-3)


@pytest.mark.parametrize("wg", WGS, ids=["bm128", "bm64"])
@pytest.mark.parametrize("name", NAMES)
def test_verifies_without_errors(name, wg):
    from argus.verify.driver import run
    report = run(kernel_ir("gemm_splitk", name, **wg))
    assert report.verdict == "verified", [str(f) for f in report.findings]


@pytest.mark.parametrize("wg", WGS, ids=["bm128", "bm64"])
@pytest.mark.parametrize("name", NAMES)
def test_binary_reduces_with_redg(name, wg):
    from argus.codegen import generate
    from argus.runtime import BuildOptions, build_kernel, check_kernel_binary
    from argus.runtime.toolchain import find_tool, nvrtc_identity
    if find_tool("nvcc") is None and nvrtc_identity() is None:
        pytest.skip("no CUDA compiler")
    if not (find_tool("cuobjdump") or find_tool("nvdisasm")):
        pytest.skip("no disassembler")
    entry = build_kernel(generate(kernel_ir("gemm_splitk", name, **wg)).source, BuildOptions())
    budget = min(255, 65536 // (128 * (1 + wg["WG"])) // 8 * 8)   # 168 at 384 threads
    assert check_kernel_binary(entry, {"kernel": name, "max_registers": budget,
                                       "role_registers": {"producer": 40, "consumer": 232},
                                       "instructions": ["HGMMA", "UTMALDG", "SYNCS", "REDG"]}) == []
    assert set(re.findall(r"REDG\.E\.ADD\.F32x2\S*", entry.sass().text))
