"""`argus compile FILE::KERNEL --emit ir`: the IR printed; unbuilt stages refused honestly."""

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


@pytest.mark.parametrize("target", ["cuda", "ptx", "cubin", "sass"])
def test_unbuilt_targets_exit_2_saying_so(target, capsys):
    assert main(["compile", f"{EXAMPLES / 'copy.py'}::copy", "--emit", target]) == 2
    err = capsys.readouterr().err
    assert "not available yet" in err and "CUDA backend is not built" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("target, hint", [
    ("copy.py::nope", "kernels defined there: copy"),
    ("copy.py", "FILE.py::KERNEL"),
    ("missing.py::copy", "no such file"),
])
def test_bad_targets_exit_2_with_a_hint(target, hint, capsys):
    assert main(["compile", f"{EXAMPLES / target}"]) == 2
    err = capsys.readouterr().err
    assert hint in err and "Traceback" not in err
