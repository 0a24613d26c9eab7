"""The build: cubin (never PTX) for sm_90a through NVRTC or nvcc, and errors that point at the source."""

import pytest

from argus.runtime import BuildError, BuildOptions, compile_cubin
from argus.runtime import build as build_module
from argus.runtime import toolchain
from runtime_kernels import requires_nvcc, requires_nvrtc

ELF_MAGIC = b"\x7fELF"

BROKEN = """\
extern "C" __global__ void broken(float* out) {
  float x = 1.0f;
  out[threadIdx.x] = x + undefined_name;
  out[0] = x;
}
"""


def test_nvcc_build_is_an_sm90a_cubin(every_wrapper_nvcc):
    assert every_wrapper_nvcc.cubin.startswith(ELF_MAGIC)
    assert every_wrapper_nvcc.compiler.startswith("nvcc")
    assert "Compiling entry function 'every_wrapper' for 'sm_90a'" in every_wrapper_nvcc.log


def test_nvrtc_build_is_an_sm90a_cubin(every_wrapper_nvrtc):
    assert every_wrapper_nvrtc.cubin.startswith(ELF_MAGIC)
    assert every_wrapper_nvrtc.compiler.startswith("nvrtc")
    assert "for 'sm_90a'" in every_wrapper_nvrtc.log


@pytest.mark.parametrize("compiler", [pytest.param("nvcc", marks=requires_nvcc),
                                      pytest.param("nvrtc", marks=requires_nvrtc)])
def test_compile_error_names_the_failing_line(compiler):
    with pytest.raises(BuildError) as info:
        compile_cubin(BROKEN, BuildOptions(compiler=compiler))
    err = info.value
    assert "undefined_name" in err.log
    assert ">     3 |   out[threadIdx.x] = x + undefined_name;" in err.excerpt
    assert "      2 |   float x = 1.0f;" in err.excerpt  # context above
    assert "      4 |   out[0] = x;" in err.excerpt  # and below
    assert "undefined_name" in str(err) and compiler in str(err).lower()


@requires_nvcc
def test_nvcc_uses_the_gencode_form_for_sm90a():
    cmd = build_module.nvcc_command("nvcc", BuildOptions(max_registers=128), "k.cu", "k.cubin")
    assert "-cubin" in cmd and "-gencode=arch=compute_90a,code=sm_90a" in cmd
    assert "-maxrregcount=128" in cmd and cmd[cmd.index("-Xptxas") + 1] == "-v"
    assert f"-I{toolchain.ARGUS_HEADER_DIR}" in cmd


def test_nvrtc_options_ask_for_sass_of_sm90a_and_the_ptxas_report():
    opts = build_module.nvrtc_options(BuildOptions(defines=(("TILE", "128"),)))
    assert "--gpu-architecture=sm_90a" in opts and "--ptxas-options=-v" in opts
    assert "-DTILE=128" in opts and f"-I{toolchain.ARGUS_HEADER_DIR}" in opts


def test_no_compiler_at_all_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(toolchain, "nvrtc_identity", lambda: None)
    monkeypatch.setattr(toolchain, "find_tool", lambda name: None)
    with pytest.raises(BuildError, match="pip install cuda-python.*nvcc on PATH"):
        compile_cubin(BROKEN)


def test_nvrtc_requested_but_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(toolchain, "nvrtc_identity", lambda: None)
    with pytest.raises(BuildError, match="NVRTC was requested.*pip install cuda-python"):
        compile_cubin(BROKEN, BuildOptions(compiler="nvrtc"))


@requires_nvcc
def test_auto_falls_back_to_nvcc_without_nvrtc(monkeypatch):
    monkeypatch.setattr(toolchain, "nvrtc_identity", lambda: None)
    assert build_module.select_compiler(BuildOptions()).kind == "nvcc"


@pytest.mark.parametrize("bad, message", [
    (dict(compiler="clang"), "compiler must be one of"),
    (dict(arch="90a"), "arch must look like 'sm_90a'"),
    (dict(max_registers=300), r"max_registers must be in \[16, 255\]"),
    (dict(defines=("TILE=128",)), r"defines must be \(name, value\) pairs"),
])
def test_bad_options_are_refused(bad, message):
    with pytest.raises(ValueError, match=message):
        BuildOptions(**bad)


def test_build_returns_entries_with_resources(every_wrapper_nvcc):
    kernel = every_wrapper_nvcc.resources.kernels["every_wrapper"]
    assert kernel.registers > 0 and kernel.shared_bytes >= 64 * 64 * 2 * 2


def test_nvrtc_is_found_under_the_old_module_name(monkeypatch):
    """cuda-python before 12.6 had cuda.nvrtc instead of cuda.bindings.nvrtc."""
    import sys
    import types

    old_style = types.ModuleType("cuda.nvrtc")
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)  # makes `from cuda.bindings import` fail
    monkeypatch.setitem(sys.modules, "cuda.bindings.nvrtc", None)
    monkeypatch.setitem(sys.modules, "cuda.nvrtc", old_style)
    if "cuda" not in sys.modules:
        monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
    monkeypatch.setattr(sys.modules["cuda"], "nvrtc", old_style, raising=False)
    assert toolchain.load_nvrtc() is old_style


def test_no_nvrtc_module_at_all(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    monkeypatch.setitem(sys.modules, "cuda.bindings.nvrtc", None)
    monkeypatch.setitem(sys.modules, "cuda.nvrtc", None)
    assert toolchain.load_nvrtc() is None


BAD_ASM = """\
#include "bad_wrapper.cuh"
extern "C" __global__ void k(float* o) {
  o[1] = 2.0f;
  asm volatile("mbarrier.bogus.b64 [%0];" :: "r"(0));
  o[0] = 1.0f;
  bad_wrapper();
}
"""


@pytest.mark.parametrize("compiler", [pytest.param("nvcc", marks=requires_nvcc),
                                      pytest.param("nvrtc", marks=requires_nvrtc)])
def test_ptxas_error_is_traced_to_the_source_line(compiler, tmp_path):
    """An assembler error names a PTX line; the excerpt shows the C++ line, also through an
    inlined header wrapper (the line that called it)."""
    (tmp_path / "bad_wrapper.cuh").write_text(
        '__device__ __forceinline__ void bad_wrapper() { asm volatile("fence.bogus;"); }\n')
    with pytest.raises(BuildError) as info:
        compile_cubin(BAD_ASM, BuildOptions(compiler=compiler, include_dirs=(str(tmp_path),)))
    err = info.value
    assert "Unknown modifier '.bogus'" in err.log
    assert "traced through the PTX's line info" in err.excerpt
    assert ">     4 |   asm volatile(\"mbarrier.bogus.b64" in err.excerpt
    assert ">     6 |   bad_wrapper();" in err.excerpt
