"""`argus check`: clean examples exit 0 and say tags are not verified; DSL errors exit 2
naming file:line."""

import json
from pathlib import Path

import pytest

from argus.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

BAD_NAME = '''\
from argus.lang import Tensor, fp32, kernel, load, store, tile


@kernel(grid=(1,), block=128)
def bad(X: Tensor[64, 64, fp32], Y: Tensor[64, 64, fp32]):
    x = load(tile(X, (64, 64), (0, 0)), "blocked")
    store(tile(Y, (64, 64), (0, 0)), undefined_name)
'''


@pytest.mark.parametrize("name", ["copy", "gemm", "flash_attention"])
def test_examples_are_clean_and_the_output_says_tags_are_not_checked(name, capsys):
    assert main(["check", str(EXAMPLES / f"{name}.py")]) == 0
    out = capsys.readouterr().out
    assert ": ok (" in out
    assert "tag invariants are NOT verified yet" in out


def test_json_names_the_kernels_and_what_was_not_checked(capsys):
    assert main(["check", f"{EXAMPLES / 'gemm.py'}::gemm", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kernels"] == ["gemm"] and report["ok"] is True
    assert "tag-invariants" in report["not_checked"]


def test_unknown_name_exits_2_naming_file_and_line(tmp_path, capsys):
    path = tmp_path / "bad.py"
    path.write_text(BAD_NAME)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:7:" in err and "undefined_name" in err
    assert "Traceback" not in err


def test_unknown_kernel_exits_2(capsys):
    assert main(["check", f"{EXAMPLES / 'copy.py'}::gemm"]) == 2
    assert "kernels defined there: copy" in capsys.readouterr().err
