"""Every library kernel specialisation generates, compiles for sm_90a and is clean: the
intended instructions (HGMMA of the right shape and type, UTMALDG, SYNCS, setmaxnreg for
each role), no spills or local memory, no serialized wgmma, shared memory within the plan,
and a second build is a cache hit under 50 ms. This is CI's check of the shipped binaries."""

import re
import time

import pytest

from argus.codegen import generate
from argus.ops.library import kernel_ir
from argus.runtime import BuildOptions, KernelCache, build_kernel, check_kernel_binary
from argus.runtime.toolchain import find_tool, nvrtc_identity

CAN_COMPILE = find_tool("nvcc") is not None or nvrtc_identity() is not None
CAN_DISASSEMBLE = bool(find_tool("cuobjdump") or find_tool("nvdisasm"))
pytestmark = pytest.mark.skipif(not (CAN_COMPILE and CAN_DISASSEMBLE),
                                reason="needs a CUDA compiler and cuobjdump/nvdisasm")

SPECIALISATIONS = [(name, dt, bn, {256: 4, 128: 6, 64: 8}[bn])
                   for name in ("gemm_nt", "gemm_nn") for dt in ("bf16", "fp16")
                   for bn in (256, 128, 64)]
HGMMA_TYPE = {"bf16": ".BF16", "fp16": ""}   # SASS spells f16 inputs as plain .F32


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return KernelCache(tmp_path_factory.mktemp("library-cache"))


@pytest.mark.parametrize("name,dt,bn,stages", SPECIALISATIONS,
                         ids=[f"{n}-{d}-n{b}" for n, d, b, _ in SPECIALISATIONS])
def test_library_gemm_binary_is_clean(cache, name, dt, bn, stages):
    ir = kernel_ir("gemm", name, DT=dt, BN=bn, S=stages, ACC=f"wgmma_acc_m64n{bn}")
    gen = generate(ir)
    assert gen.smem_bytes <= 227 * 1024
    planned = 128 * 64 * 2 * stages + bn * 64 * 2 * stages
    assert planned <= gen.smem_bytes <= planned + 2048   # operands + barriers + alignment slack
    entry = build_kernel(gen.source, BuildOptions(), cache)
    problems = check_kernel_binary(entry, {
        "kernel": name, "max_registers": 168, "max_shared_bytes": 0,
        "role_registers": {"producer": 40, "consumer": 232},
        "instructions": ["HGMMA", "UTMALDG", "SYNCS"]})
    assert problems == []
    sass = entry.sass()
    text = sass.text if hasattr(sass, "text") else str(sass)
    shapes = set(re.findall(r"HGMMA\.64x\d+x16\.F32(?:\.BF16)?(?=[ .;])", text))
    assert shapes == {f"HGMMA.64x{bn}x16.F32{HGMMA_TYPE[dt]}"}
    start = time.perf_counter()
    again = build_kernel(gen.source, BuildOptions(), cache)
    elapsed = time.perf_counter() - start
    assert again.cubin == entry.cubin
    assert elapsed < 0.050, f"a cache hit took {elapsed * 1e3:.1f} ms"
