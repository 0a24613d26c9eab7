"""The GEMM with its epilogue through shared memory and TMA store (gemm.py with
EPILOGUE="smem_tma"): correct on the
interpreter in both modes with one persistent block walking several tiles (so the
shared tile is reused), verified without errors, its binary clean; and the verifier
catches the reuse bugs this epilogue invites."""

from pathlib import Path

import numpy as np
import pytest

from argus.frontend import parse_source
from argus.interp.evaluator import interpret
from argus.interp.machine.dtypes import BF16
from argus.ops.library import KERNEL_DIR, kernel_ir
from argus.verify import verify

SOURCE = (KERNEL_DIR / "gemm.py").read_text()
SMEM_TMA = {"EPILOGUE": "smem_tma", "S": 3}


def _bf16(rng, shape):
    return BF16.decode(BF16.encode(rng.standard_normal(shape).astype(np.float32)))


@pytest.mark.parametrize("mode", ["value", "exact"])
def test_one_block_many_tiles_with_tails(mode):
    ir = kernel_ir("gemm", "gemm_nt", BLOCKS=1, **SMEM_TMA)
    rng = np.random.default_rng(7)
    m, n, k = 300, 520, 200          # 3 x 3 tiles, tails in M, N and K
    a, b = _bf16(rng, (m, k)), _bf16(rng, (n, k))
    res = interpret(ir, {"A": a, "B": b, "C": np.full((m, n), np.nan, np.float32)}, seed=5,
                    mode=mode)
    assert res.ok, res.failures()
    got = np.asarray(res.outputs["C"], np.float64)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.isfinite(got).all()
    assert np.abs(got - ref).max() <= 2 ** -7 * np.abs(ref).max()


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
def test_verifies_with_no_finding(name):
    assert verify(kernel_ir("gemm", name, **SMEM_TMA)) == []


WAIT = '''                if wg == 0:
                    with elect_one():
                        tma_store_wait(0)
                named_barrier(1, 128 * WG)
'''


@pytest.mark.parametrize("bug, replacement", [
    ("no wait before reuse", "                named_barrier(1, 128 * WG)\n"),
    ("wait not published by a barrier", WAIT.replace("                named_barrier(1, 128 * WG)\n",
                                                     "")),
])
def test_reuse_bugs_are_caught(bug, replacement):
    assert WAIT in SOURCE
    src = SOURCE.replace(WAIT, replacement, 1)
    ir = parse_source(src, "epilogue_bug.py", SMEM_TMA)["gemm_nt"]
    found = [f for f in verify(ir) if f.check == "protocol.store-reuse"]
    assert found, bug
    line = next(i + 1 for i, l in enumerate(src.splitlines())
                if l.strip().startswith("store(tile(c_s[0]"))
    assert found[0].loc.line == line


@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
def test_binary_has_the_tma_store(name):
    from argus.codegen import generate
    from argus.runtime import BuildOptions, build_kernel, check_kernel_binary
    from argus.runtime.toolchain import find_tool, nvrtc_identity
    if find_tool("nvcc") is None and nvrtc_identity() is None:
        pytest.skip("no CUDA compiler")
    if not (find_tool("cuobjdump") or find_tool("nvdisasm")):
        pytest.skip("no disassembler")
    gen = generate(kernel_ir("gemm", name, **SMEM_TMA))
    assert gen.smem_bytes <= 227 * 1024
    assert "argus::st_shared_u32" in gen.source and "argus::tma_store<2>" in gen.source
    entry = build_kernel(gen.source, BuildOptions())
    assert check_kernel_binary(entry, {
        "kernel": gen.name, "max_registers": 168,
        "role_registers": {"producer": 40, "consumer": 232},
        "instructions": ["HGMMA", "UTMALDG", "UTMASTG", "SYNCS"]}) == []
