"""Every example kernel generates, compiles for sm_90a and reaches the SASS it should: row
reductions as warp shuffles, exp2 on the special-function unit, the PV product of flash
attention as an HGMMA with A in registers, TMA for the streamed tiles; no spills where the
kernel's registers fit (the routing kernels keep whole-block row vectors in every thread,
and index them by thread, so they are allowed local memory: docs/design/codegen.md)."""

import re
from pathlib import Path

import pytest

from argus.codegen import generate
from argus.frontend.parse import parse_file
from argus.runtime import BuildOptions, KernelCache, build_kernel
from argus.runtime.toolchain import find_tool, nvrtc_identity

ROOT = Path(__file__).resolve().parents[2]
CAN_COMPILE = find_tool("nvcc") is not None or nvrtc_identity() is not None
CAN_DISASSEMBLE = bool(find_tool("cuobjdump") or find_tool("nvdisasm"))
pytestmark = pytest.mark.skipif(not (CAN_COMPILE and CAN_DISASSEMBLE),
                                reason="needs a CUDA compiler and cuobjdump/nvdisasm")

# (file, kernel, SASS opcodes that must appear, local memory allowed)
EXAMPLES = [
    ("examples/copy.py", "copy", ["LDG", "STG"], False),
    ("examples/gemm.py", "gemm", ["HGMMA", "UTMALDG"], False),
    ("examples/flash_attention.py", "flash_fwd", ["HGMMA", "SHFL", "MUFU", "UTMALDG"], False),
    ("examples/moe_route.py", "moe_route", ["BAR", "LDS", "STS", "MUFU"], True),
    ("examples/moe_combine.py", "moe_combine", ["LDG", "STG"], True),
    ("examples/moe_gate_up.py", "moe_gate_up", ["HGMMA", "UTMALDG", "MUFU"], False),
    ("examples/moe.py", "moe_grouped", ["HGMMA", "UTMALDG"], False),
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return KernelCache(tmp_path_factory.mktemp("examples-cache"))


def _build(cache, path, name, **overrides):
    kernel = parse_file(str(ROOT / path), overrides=overrides or None)[name]
    return build_kernel(generate(kernel).source, BuildOptions(), cache)


SLOW = {"moe_route", "moe_gate_up"}       # 30-50 s builds each: in the full run only


@pytest.mark.parametrize("path,name,want,local", [
    pytest.param(*e, id=e[1], marks=pytest.mark.slow if e[1] in SLOW else ()) for e in EXAMPLES])
def test_example_builds_to_the_intended_sass(cache, path, name, want, local):
    entry = _build(cache, path, name)
    report = entry.resources.kernels[name]
    if not local:
        assert report.spill_store_bytes == 0 and report.stack_frame_bytes == 0, report
    hist = entry.sass().histogram(name)
    for base in want:
        assert hist[base] > 0, f"{base} missing from the SASS of {name}"


@pytest.mark.parametrize("hd,causal", [(64, 0), (64, 1), (128, 0), (128, 1)])
def test_flash_attention_pv_product_reads_a_from_registers(cache, hd, causal):
    entry = _build(cache, "examples/flash_attention.py", "flash_fwd", HD=hd, CAUSAL=causal)
    hgmma = [i.text for i in entry.sass().instructions("flash_fwd") if i.base == "HGMMA"]
    register_a = [t for t in hgmma if re.search(r"HGMMA\.\S+ R\d+, R\d+, gdesc", t)]
    smem_a = [t for t in hgmma if re.search(r"HGMMA\.\S+ R\d+, gdesc", t)]
    assert register_a and smem_a, hgmma
    assert all(f"64x{hd}x16" in t for t in register_a)
    report = entry.resources.kernels["flash_fwd"]
    assert report.spill_store_bytes == 0
