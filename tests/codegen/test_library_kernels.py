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


def _shipped_configs():
    """Every distinct configuration argus.ops.matmul picks (tuned table, else heuristic)
    for issue 6's shapes and a few with tails, both B layouts, bf16."""
    from argus.ops.gemm_configs import config_for

    shapes = [(8192, 8192, 8192), (4096, 4096, 4096), (4096, 12288, 4096), (4096, 28672, 4096),
              (4096, 4096, 14336), (16384, 8192, 2048), (256, 8192, 8192), (128, 4096, 4096),
              (1000, 1032, 520), (1, 8, 8)]
    seen = {}
    for layout, name in (("kn", "gemm_nn"), ("nk", "gemm_nt")):
        for shape in shapes:
            cfg = config_for(*shape, layout)
            if cfg.get("SPLIT"):
                continue                  # gemm_splitk.py: tests/kernels/test_gemm_splitk.py
            cfg.pop("BLOCKS")
            seen.setdefault((name, tuple(sorted(cfg.items()))), cfg)
    return [(name, cfg) for (name, _), cfg in seen.items()]


SHIPPED = _shipped_configs()


@pytest.mark.parametrize("name,cfg", SHIPPED,
                         ids=[f"{n}-" + "-".join(f"{k}{v}" for k, v in sorted(c.items())
                                                 if k not in ("ACC", "CONSUMERS"))
                              for n, c in SHIPPED])
def test_every_shipped_configuration_is_clean(cache, name, cfg):
    gen = generate(kernel_ir("gemm", name, **cfg))
    assert gen.smem_bytes <= 227 * 1024
    roles = {"producer": 40, "consumer": 232}
    entry = build_kernel(gen.source, BuildOptions(), cache)
    instructions = ["HGMMA", "UTMALDG", "SYNCS"]
    if cfg.get("EPILOGUE") == "smem_tma":
        instructions.append("UTMASTG")
    # 384 threads start at 168 registers (65536 / 384); 256 threads (one consumer) at the
    # consumer's 232, never above a role's setmaxnreg budget
    entry_regs = 168 if cfg.get("WG", 2) == 2 else 232
    assert check_kernel_binary(entry, {
        "kernel": name, "max_registers": entry_regs, "max_shared_bytes": 0,
        "role_registers": roles, "instructions": instructions}) == []
    assert entry.resources.kernels[name].registers == entry_regs
    text = entry.sass().text if hasattr(entry.sass(), "text") else str(entry.sass())
    assert ("UTMALDG.2D.MULTICAST" in text) == (cfg.get("CM", 1) > 1)
    # GPU-wide fences only at the two cluster barriers (after init, before exit), never in
    # the mainloop (a release.cluster remote arrive put one in every k-step once)
    assert text.count("MEMBAR.ALL.GPU") <= text.count("UCGABAR_ARV") <= 2
