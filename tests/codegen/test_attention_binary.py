"""The library attention's shipped specialisations (argus.ops.attention_configs.config_for
for both head dims, causal or not, both dtypes and layouts) build for sm_90a clean: HGMMA of
the S and O widths, TMA loads, setmaxnreg for each role, no spills or local memory, and no
serialized wgmma (C7520: the warp-uniform warpgroup index and the register-A packing before
the fence keep ptxas from it) nor an injected warpgroup.arrive (C7519)."""

import re

import pytest

from argus.codegen import generate
from argus.ops.attention_configs import config_for
from argus.ops.library import kernel_ir
from argus.runtime import BuildOptions, KernelCache, build_kernel, check_kernel_binary
from argus.runtime.toolchain import find_tool, nvrtc_identity

CAN_COMPILE = find_tool("nvcc") is not None or nvrtc_identity() is not None
CAN_DISASSEMBLE = bool(find_tool("cuobjdump") or find_tool("nvdisasm"))
pytestmark = pytest.mark.skipif(not (CAN_COMPILE and CAN_DISASSEMBLE),
                                reason="needs a CUDA compiler and cuobjdump/nvdisasm")

SHIPPED = [(layout, dt, hd, causal) for dt in ("bf16", "fp16") for hd in (64, 128)
           for causal in (0, 1) for layout in ("bhsd",)] + \
          [("bshd", "bf16", 128, 1), ("bshd", "fp16", 64, 0)]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return KernelCache(tmp_path_factory.mktemp("attention-cache"))


@pytest.mark.parametrize("layout,dt,hd,causal", SHIPPED,
                         ids=[f"{a}-{b}-d{c}-c{d}" for a, b, c, d in SHIPPED])
def test_shipped_attention_binary_is_clean(cache, layout, dt, hd, causal):
    cfg = config_for(hd, bool(causal), 4096, 4096)
    name = f"attention_{layout}"
    gen = generate(kernel_ir("attention", name, DT=dt, HD=hd, CAUSAL=causal, G=4, **cfg))
    entry = build_kernel(gen.source, BuildOptions(), cache)
    log = entry.meta["log"]
    assert "ptxas" in log and "C7519" not in log and "C7520" not in log
    problems = check_kernel_binary(entry, {
        "kernel": name, "max_shared_bytes": 0,
        "role_registers": {"producer": 24, "consumer": 240},
        "instructions": ["HGMMA", "UTMALDG", "SYNCS"]})
    assert problems == []
    sass = entry.sass()
    text = sass.text if hasattr(sass, "text") else str(sass)
    shapes = set(re.findall(r"HGMMA\.64x(\d+)x16", text))
    assert shapes == {str(cfg["BN"]), str(hd)} | ({str(hd)} if hd == cfg["BN"] else set())
