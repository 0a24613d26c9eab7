"""Vector accesses between global memory and registers: the runs a layout keeps in
consecutive registers (RegisterLayout.vector), the code around them (one aligned access per
whole run, element by element on edges and unaligned views) and the SASS they reach."""

import re

import pytest

from argus.codegen import generate
from argus.codegen.registers import register_layout
from argus.frontend.parse import parse_source
from argus.runtime import BuildOptions, KernelCache, build_kernel
from argus.runtime.toolchain import find_tool, nvrtc_identity

CAN_BUILD = (find_tool("nvcc") is not None or nvrtc_identity() is not None) and \
    bool(find_tool("cuobjdump") or find_tool("nvdisasm"))


@pytest.mark.parametrize("name, shape, width", [
    ("blocked", (64, 64), 8), ("blocked", (1024,), 8), ("blocked", (128, 4), 4),
    ("blocked", (96, 24), 2), ("blocked", (300,), 1), ("blocked", (64,), 1),
    ("wgmma_acc_m64n64", (64, 64), 2), ("wgmma_acc_m64n128", (64, 128), 2),
    ("rows(wgmma_acc_m64n64)", (64,), 1), ("rows(blocked)", (64,), 8),
])
def test_runs_of_row_neighbours(name, shape, width):
    layout = register_layout(name, shape)
    assert layout.vector() == width
    rows = layout.table.rows
    cols = rows if len(shape) == 1 else layout.table.cols
    # what vector() promises, checked on the table directly
    for t in range(layout.threads):
        for v in range(0, layout.values, width):
            assert cols[t, v] % width == 0
            assert list(cols[t, v:v + width]) == list(range(cols[t, v], cols[t, v] + width))
            assert len(set(rows[t, v:v + width])) == 1 or len(shape) == 1


def _copy(dtype, box, shape, layout="blocked", grid="(2, 2)"):
    origin = "(block_id(\"x\"), block_id(\"y\"))" if len(box) == 2 else "(block_id(\"x\"),)"
    sig = ", ".join(repr(d) for d in shape)
    src = (f"from argus.lang import *  # noqa: F401,F403\n\n"
           f"@kernel(grid={grid}, block=128)\n"
           f"def copy(X: Tensor[{sig}, {dtype}], Y: Tensor[{sig}, {dtype}]):\n"
           f"    x = load(tile(X, {box}, {origin}), \"{layout}\")\n"
           f"    store(tile(Y, {box}, {origin}), x)\n")
    return parse_source(src, "<copy>")["copy"]


def ptr_of(cond: str) -> str:
    return re.match(r"argus::vector_aligned<\d+>\((\w+)\)", cond).group(1)


def test_whole_runs_take_one_access_and_edges_go_element_by_element():
    cuda = generate(_copy("bf16", (64, 64), ("M", "N"))).source
    assert "argus::load_vec<8>(X + " in cuda and "argus::load_vec<2>(X + " in cuda
    # 16-bit values are written as packed pairs: 4 words of 32 bits, one 16-byte access
    assert "argus::store_vec<4>(reinterpret_cast<argus::u32*>(Y + " in cuda
    assert "argus::pack_bf16x2(x[argus_v + argus_c + 2 * argus_i], x[argus_v + argus_c + 2 * argus_i + 1])" in cuda
    # uniform alignment checks per access, widest first: 16, 8 and 4 bytes (8, 4, 2 bf16)
    checks = re.findall(r"const bool (\w+) = (.*);  // accesses of (\d+) elements", cuda)
    assert [(ptr_of(c), int(e)) for _, c, e in checks] == \
        [("X", 8), ("X", 4), ("X", 2), ("Y", 8), ("Y", 4), ("Y", 2)]
    for flag, cond, e in checks:
        assert cond.endswith(f"% {e} == 0 && (N) % {e} == 0"), cond
        assert f"if (argus_whole && {flag})" in cuda
    # a box wholly inside the tensor takes the widest accesses with no per-run test
    inside = re.findall(r"if \(\(\((\w+)\) \* 64\) \+ 64 <= M && \(\((\w+)\) \* 64\) \+ 64 <= N "
                        r"&& (argus_vec8\w*)\) \{  // the whole box", cuda)
    assert [flag for *_, flag in inside] == [checks[0][0], checks[3][0]], inside
    # the fallback keeps the per-element bounds of the scalar path; loads convert after all
    # the raw elements are in
    assert cuda.count("? X[") == 1 and cuda.count(") Y[") == 1
    assert "x[argus_v] = argus::from_bf16(argus_raw[argus_v]);" in cuda


def test_a_layout_without_runs_moves_element_by_element():
    cuda = generate(_copy("fp32", (300,), (300,), grid="(1,)")).source
    assert "load_vec" not in cuda and "store_vec" not in cuda


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return KernelCache(tmp_path_factory.getbasetemp() / "argus-vector-cache")


@pytest.mark.skipif(not CAN_BUILD, reason="needs a CUDA compiler and a disassembler")
@pytest.mark.parametrize("dtype, box, shape, layout, want", [
    ("fp32", (64, 64), ("M", "N"), "blocked", {"LDG.E.128.CONSTANT", "STG.E.128"}),
    ("bf16", (64, 64), ("M", "N"), "blocked", {"LDG.E.128.CONSTANT", "STG.E.128"}),
    ("fp16", (128, 4), ("M", 4), "blocked", {"LDG.E.64.CONSTANT", "STG.E.64"}),
    ("int32", (1024,), ("M",), "blocked", {"LDG.E.128.CONSTANT", "STG.E.128"}),
    ("fp32", (64, 64), ("M", "N"), "wgmma_acc_m64n64", {"LDG.E.64.CONSTANT", "STG.E.64"}),
])
def test_runs_reach_the_sass_as_wide_accesses(cache, dtype, box, shape, layout, want):
    kernel = _copy(dtype, box, shape, layout, grid="(2, 2)" if len(box) == 2 else "(2,)")
    entry = build_kernel(generate(kernel).source, BuildOptions(), cache)
    ops = {i.opcode for i in entry.sass().instructions("copy")}
    assert want <= ops, sorted(o for o in ops if "G.E" in o)
    report = entry.resources.kernels["copy"]
    assert report.spill_store_bytes == 0 and report.stack_frame_bytes == 0, report
