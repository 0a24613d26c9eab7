"""The device headers: each compiles for sm_90a, every wrapper lowers to its intended SASS, the
template checks fire, and the headers keep their shape (one instruction per wrapper, no loops
but the try_wait spin, shape variants from a table)."""

import re
from pathlib import Path

import pytest

from argus.runtime import BuildError, BuildOptions, KernelCache, build_kernel, compile_cubin
from argus.runtime.toolchain import ARGUS_HEADER_DIR, find_tool, nvrtc_identity

HEADERS = sorted(ARGUS_HEADER_DIR.glob("*.cuh"))
EVERY_WRAPPER = Path(__file__).parent.parent / "runtime" / "kernels" / "every_wrapper.cu"
HAVE_NVCC = find_tool("nvcc") is not None
HAVE_NVRTC = nvrtc_identity() is not None
CAN_COMPILE = HAVE_NVCC or HAVE_NVRTC
CAN_DISASSEMBLE = bool(find_tool("cuobjdump") or find_tool("nvdisasm"))
compiles = pytest.mark.skipif(not CAN_COMPILE, reason="neither nvcc nor cuda-python's NVRTC is available")
inspects = pytest.mark.skipif(not (CAN_COMPILE and CAN_DISASSEMBLE), reason="needs a compiler and cuobjdump/nvdisasm")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return KernelCache(tmp_path_factory.getbasetemp() / "argus-session-cache")


@pytest.fixture(scope="module", params=[
    pytest.param("nvcc", marks=pytest.mark.skipif(not HAVE_NVCC, reason="nvcc is not on PATH")),
    pytest.param("nvrtc", marks=pytest.mark.skipif(not HAVE_NVRTC, reason="NVRTC does not load")),
])
def every_wrapper(request, cache):
    return build_kernel(EVERY_WRAPPER.read_text(), BuildOptions(compiler=request.param), cache)


def opcodes(entry) -> set[str]:
    return {i.opcode for i in entry.sass().instructions("every_wrapper")}


def test_the_test_kernel_includes_every_header():
    included = set(re.findall(r'#include "([^"]+)"', EVERY_WRAPPER.read_text()))
    assert included == {h.name for h in HEADERS}


@inspects
def test_every_feature_reaches_the_sass(every_wrapper):
    h = every_wrapper.sass().histogram("every_wrapper")
    for base in ["HGMMA", "UTMALDG", "UTMASTG", "SYNCS", "LDSM", "STSM", "USETMAXREG", "ELECT",
                 "UTMACCTL", "UCGABAR_ARV", "UCGABAR_WAIT", "BAR", "MUFU", "SHFL", "LDS", "STS",
                 "LDGSTS", "ARRIVES"]:
        assert h[base] > 0, f"{base} missing from the SASS of every_wrapper"


@inspects
def test_vector_moves_are_single_wide_accesses(every_wrapper):
    ops = opcodes(every_wrapper)
    assert {"LDG.E.128", "STG.E.128", "STG.E.64"} <= ops, sorted(o for o in ops if "G.E" in o)


@inspects
def test_every_tma_rank_loads_and_stores(every_wrapper):
    ops = opcodes(every_wrapper)
    for rank in range(1, 6):
        assert f"UTMALDG.{rank}D" in ops and f"UTMASTG.{rank}D" in ops
    multicast = [i for i in every_wrapper.sass().instructions("every_wrapper") if i.base == "UTMALDG" and ".MULTICAST" in i.opcode]
    assert len(multicast) == 5


@inspects
def test_every_ldmatrix_and_stmatrix_form(every_wrapper):
    ops = opcodes(every_wrapper)
    for kind in ("LDSM", "STSM"):
        for layout in ("M88", "MT88"):
            for suffix in ("", ".2", ".4"):
                assert f"{kind}.16.{layout}{suffix}" in ops, f"{kind}.16.{layout}{suffix} missing"


@inspects
def test_wgmma_forms(every_wrapper):
    hgmma = [i.text for i in every_wrapper.sass().instructions("every_wrapper") if i.base == "HGMMA"]
    assert len(hgmma) == 5
    assert any("64x64x16.F32.BF16" in t and "gdesc[UR" in t.split(",")[1] for t in hgmma)  # smem A
    assert any(".tnspA.tnspB" in t and ".BF16" not in t for t in hgmma)  # fp16, both transposed
    assert any(re.search(r"64x64x16\.F32\.BF16 R\d+, R\d+, gdesc", t) for t in hgmma)  # register A
    assert any("64x256x16" in t and re.search(r", R\d+, gdesc\[UR\d+\]\.tnspB", t) for t in hgmma)


@inspects
def test_every_wgmma_n_assembles(cache):
    src = ('#include "argus_wgmma.cuh"\nusing namespace argus;\n'
           "template <int N> __global__ void __launch_bounds__(128, 1) mma_n(float* out, unsigned long long desc) {\n"
           "  float d[N / 2];\n  wgmma_fence();\n  wgmma_ss<N, WgmmaInput::bf16>(d, desc, desc, false);\n"
           "  wgmma_commit_group();\n  wgmma_wait_group<0>();\n#pragma unroll\n"
           "  for (int i = 0; i < N / 2; ++i) out[i * 128 + threadIdx.x] = d[i];\n}\n")
    src += "".join(f"template __global__ void mma_n<{n}>(float*, unsigned long long);\n" for n in range(8, 257, 8))
    listing = build_kernel(src, BuildOptions(), cache).sass()
    shapes = {}
    for name, insts in listing.functions.items():
        n = int(re.search(r"ILi(\d+)E", name).group(1))
        shapes[n] = {i.opcode for i in insts if i.base == "HGMMA"}
    assert shapes == {n: {f"HGMMA.64x{n}x16.F32.BF16"} for n in range(8, 257, 8)}


BAD_INSTANTIATIONS = {
    "setmaxnreg count must be a multiple of 8 in [24, 256]": "argus::setmaxnreg_inc<20>();",
    "named barrier id must be in [0, 16)": "argus::named_barrier_sync<16, 128>();",
    "named barrier thread count must be a positive multiple of 32": "argus::named_barrier_arrive<1, 100>();",
    "pending wgmma groups must be in [0, 7]": "argus::wgmma_wait_group<8>();",
    "pending bulk groups must be in [0, 7]": "argus::tma_store_wait<9>();",
    "matrix count must be 1, 2 or 4": "{ argus::u32 r[3]; argus::ldmatrix<3, false>(r, 0u); }",
    "TMA rank must be 1 to 5": "{ const int c[6] = {0, 0, 0, 0, 0, 0}; argus::tma_store<6>(p, 0u, c); }",
    "wgmma N must be a multiple of 8 in [8, 256]": "{ float d[6]; argus::wgmma_ss<12, argus::WgmmaInput::bf16>(d, 0ull, 0ull, true); }",
    "wgmma transpose flags must be 0 or 1": "{ float d[4]; argus::wgmma_ss<8, argus::WgmmaInput::f16, 2, 0>(d, 0ull, 0ull, true); }",
}


@compiles
def test_template_checks_fire_with_their_messages():
    body = "\n  ".join(BAD_INSTANTIATIONS.values())
    src = "".join(f'#include "{h.name}"\n' for h in HEADERS)
    src += f'extern "C" __global__ void bad(const void* p) {{\n  {body}\n}}\n'
    with pytest.raises(BuildError) as info:
        compile_cubin(src)
    for message in BAD_INSTANTIATIONS:
        assert message in info.value.log, f"static_assert '{message}' did not fire"


@compiles
@pytest.mark.parametrize("header", [h.name for h in HEADERS])
def test_each_header_compiles_alone(header, cache):
    src = f'#include "{header}"\n#include "{header}"\nextern "C" __global__ void alone(float* o) {{ o[0] = 1.0f; }}\n'
    assert build_kernel(src, BuildOptions(), cache).cubin.startswith(b"\x7fELF")


def _function_bodies(text: str):
    """(name, doc comment, body) of each __device__ __forceinline__ function, by brace matching."""
    for m in re.finditer(r"((?:^[ \t]*///[^\n]*\n)*)(?:^template <[^\n]*\n)?^[ \t]*__device__ __forceinline__[^{;]*?(\w+)\(", text, re.M):
        start = text.index("{", m.end())
        depth, i = 0, start
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        yield m.group(2), m.group(1), text[start:i + 1]


@pytest.mark.parametrize("header", HEADERS, ids=lambda p: p.name)
def test_wrappers_are_documented_and_loop_free(header):
    text = header.read_text()
    functions = list(_function_bodies(text))
    assert functions, f"no wrappers found in {header.name}"
    for name, doc, body in functions:
        if "struct WgmmaShape" in text and name in ("ss", "rs", "fence_operands"):
            continue  # the table's members, documented once at wgmma_ss / wgmma_rs
        assert doc.strip().startswith("///"), f"{header.name}: {name} has no /// doc comment"
        loops = re.findall(r"\b(?:for|while|do)\b\s*[({]", body)
        if name == "mbarrier_wait_parity":
            assert all(l.startswith("while") for l in loops), "the wait may only spin on try_wait"
            assert "mbarrier_try_wait_parity" in body
        else:
            assert loops == [], f"{header.name}: {name} has a loop; only mbarrier_wait_parity may spin"


def test_wgmma_shapes_come_from_one_table():
    text = (ARGUS_HEADER_DIR / "argus_wgmma.cuh").read_text()
    assert text.count("wgmma.mma_async") == 2  # one asm form for smem A, one for register A
    assert sorted(int(n) for n in re.findall(r"^ARGUS_WGMMA_SHAPE\((\d+), ", text, re.M)) == list(range(8, 257, 8))
