"""`argus compile FILE::KERNEL --emit ir|cuda|sass|cubin`: each stage, and clear refusals."""

from pathlib import Path

import pytest

from argus.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_emit_ir_of_gemm_shows_the_wgmma_ops(capsys):
    assert main(["compile", f"{EXAMPLES / 'gemm.py'}::gemm", "--emit", "ir"]) == 0
    out = capsys.readouterr().out
    assert "wgmma" in out and "tma" in out


def test_emit_ir_is_the_default_and_differs_per_kernel(capsys):
    assert main(["compile", f"{EXAMPLES / 'copy.py'}::copy"]) == 0
    copy_ir = capsys.readouterr().out
    assert "wgmma" not in copy_ir and "copy" in copy_ir


def test_emit_cuda_is_readable_generated_code(capsys):
    assert main(["compile", f"{EXAMPLES / 'gemm.py'}::gemm", "--emit", "cuda"]) == 0
    out = capsys.readouterr().out
    assert 'extern "C" __global__ void __launch_bounds__(384, 1) gemm(' in out
    assert "// gemm.py:64: wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s])" in out
    assert "argus::setmaxnreg_dec<40>();" in out and "argus::setmaxnreg_inc<232>();" in out
    assert out.count("argus::wgmma_ss<256") == 4          # BK = 64: four k16 instructions
    assert "float acc[128];" in out                         # the m64n256 accumulator


@pytest.mark.parametrize("target", ["sass", "cubin"])
def test_emit_binary_stages(target, tmp_path, capsys):
    from argus.runtime.toolchain import find_tool, nvrtc_identity
    if find_tool("nvcc") is None and nvrtc_identity() is None:
        pytest.skip("no CUDA compiler")
    if target == "sass" and not (find_tool("cuobjdump") or find_tool("nvdisasm")):
        pytest.skip("no disassembler")
    out_file = tmp_path / f"gemm.{target}"
    assert main(["compile", f"{EXAMPLES / 'gemm.py'}::gemm", "--emit", target,
                 "-o", str(out_file)]) == 0
    data = out_file.read_bytes()
    if target == "sass":
        assert b"HGMMA.64x256x16.F32.BF16" in data and b"UTMALDG" in data
    else:
        assert data[:4] == b"\x7fELF"


def test_emit_cubin_needs_an_output_file(capsys):
    assert main(["compile", f"{EXAMPLES / 'gemm.py'}::gemm", "--emit", "cubin"]) == 2
    assert "-o FILE.cubin" in capsys.readouterr().err


def test_a_kernel_the_backend_cannot_generate_names_its_line(capsys, tmp_path):
    # fp8 values are never held in registers: the backend refuses the load at its line
    fp8 = tmp_path / "copy8.py"
    fp8.write_text((EXAMPLES / "copy.py").read_text().replace("fp32", "fp8e4m3"))
    assert main(["compile", f"{fp8}::copy", "--emit", "cuda"]) == 2
    err = capsys.readouterr().err
    assert "copy8.py:17:" in err and "fp8e4m3" in err and "not generated" in err
    assert "Traceback" not in err


def test_every_example_generates(capsys):
    for name in ("copy", "flash_attention", "moe_route", "moe_combine"):
        kernel = {"flash_attention": "flash_fwd"}.get(name, name)
        assert main(["compile", f"{EXAMPLES / name}.py::{kernel}", "--emit", "cuda"]) == 0
        assert "__global__" in capsys.readouterr().out


@pytest.mark.parametrize("target, hint", [
    ("copy.py::nope", "kernels defined there: copy"),
    ("copy.py", "FILE.py::KERNEL"),
    ("missing.py::copy", "no such file"),
])
def test_bad_targets_exit_2_with_a_hint(target, hint, capsys):
    assert main(["compile", f"{EXAMPLES / target}"]) == 2
    err = capsys.readouterr().err
    assert hint in err and "Traceback" not in err


def test_run_const_overrides_reach_the_kernel_and_the_reference(capsys):
    from argus.cli.main import main as cli
    target = f"{EXAMPLES / 'flash_attention.py'}::flash_fwd"
    assert cli(["run", target, "--interpret", "--shape", "T=128", "--const",
                "HD=128,CAUSAL=0"]) == 0
    out = capsys.readouterr().out
    assert "PASS" in out
