"""Every input gets a diagnostic or a verdict within seconds and no traceback reaches the
user (issue 19, item 7): the command line over the input files of
tests/frontend/data/inputs/, layouts too large to parse or draw, shapes too large to run,
`compile -o DIR`, a file named like an option, and an exception nothing expected."""

import shutil
import time
from pathlib import Path

import pytest

from argus.cli import check_cmd, main as main_module
from argus.cli.main import EXIT_INTERNAL, main

INPUTS = Path(__file__).resolve().parents[1] / "frontend" / "data" / "inputs"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _run(argv, capsys, status=2):
    start = time.monotonic()
    assert main(argv) == status
    assert time.monotonic() - start < 10.0
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    return out.err


@pytest.mark.parametrize("name, line", [
    ("latin1_comment.py", 1), ("chain_of_150_terms.py", 12), ("ring_of_10000_stages.py", 8),
    ("cluster_2_to_31.py", 5), ("block_of_2048.py", 5), ("mbarriers_40000.py", 7),
    ("grid_of_2_to_31.py", 5)])
def test_check_gives_file_line_and_exit_2(name, line, capsys):
    err = _run(["check", str(INPUTS / name)], capsys)
    assert f"{INPUTS / name}:{line}:" in err and "hint:" in err


@pytest.mark.parametrize("layout, words", [
    ("(" * 5000 + "4" + ")" * 5000, "characters, over the"),
    ("(100000,100000):(1,100000)", "10000000000 elements"),
    ("(" + ",".join(["2"] * 2000) + ")", "about 2**2000 elements"),
    ("(4," + "7" * 100 + ")", "digits"),
    ("a" * 50000, "unknown atom 'aaaa"),
])
def test_layout_show_refuses_what_it_cannot_draw(layout, words, tmp_path, capsys):
    err = _run(["layout", "show", layout, "-o", str(tmp_path / "l.svg")], capsys)
    assert words in err and len(err) < 1000 and not (tmp_path / "l.svg").exists()


@pytest.mark.parametrize("shape, words", [
    ("M=1099511627776", "a value must be 1..2147483647"),
    ("M=0", "a value must be 1..2147483647"),
    ("M=1000000,N=1000000", "over the 67108864 the interpreter runs"),
])
def test_run_refuses_shapes_too_large_to_run(shape, words, capsys):
    err = _run(["run", f"{EXAMPLES / 'copy.py'}::copy", "--interpret", "--shape", shape], capsys)
    assert words in err


def test_compile_to_a_directory_is_a_usage_error(tmp_path, capsys):
    err = _run(["compile", f"{EXAMPLES / 'copy.py'}::copy", "-o", str(tmp_path)], capsys)
    assert "is a directory" in err


def test_compile_into_a_missing_folder_is_a_usage_error(tmp_path, capsys):
    err = _run(["compile", f"{EXAMPLES / 'copy.py'}::copy", "-o", str(tmp_path / "no" / "k.ir")],
               capsys)
    assert "create it first" in err


@pytest.mark.parametrize("argv", [["check", "{f}"], ["check", "--", "{f}"],
                                  ["run", "{f}::small_copy", "--interpret", "--shape", "M=64,N=64"],
                                  ["compile", "{f}::small_copy"]])
def test_a_file_named_like_an_option_is_a_target(argv, tmp_path, monkeypatch, capsys):
    shutil.copy(INPUTS / "small_copy.py", tmp_path / "--help.py")
    monkeypatch.chdir(tmp_path)
    assert main([a.replace("{f}", "--help.py") for a in argv]) == 0
    out = capsys.readouterr().out
    assert "usage:" not in out and ("verified" in out or "PASS" in out or "kernel @" in out)


def test_an_unexpected_exception_is_one_line_not_a_traceback(monkeypatch, capsys):
    def broken(args):
        raise KeyError("a bug of ours")
    monkeypatch.setattr(check_cmd, "run_check", broken)
    monkeypatch.delenv("ARGUS_TRACEBACK", raising=False)
    err = _run(["check", str(INPUTS / "small_copy.py")], capsys, status=EXIT_INTERNAL)
    assert err.count("\n") == 1 and "internal error in `argus check`: KeyError" in err
    assert "please report" in err and "test_robust_inputs.py:" in err


def test_running_out_of_memory_is_a_usage_error(monkeypatch, capsys):
    def hungry(args):
        raise MemoryError()
    monkeypatch.setattr(check_cmd, "run_check", hungry)
    err = _run(["check", str(INPUTS / "small_copy.py")], capsys)
    assert "too large" in err and "MemoryError" in err


def test_protect_targets_moves_only_existing_files(tmp_path, monkeypatch):
    (tmp_path / "-x.py").write_text("")
    monkeypatch.chdir(tmp_path)
    assert main_module.protect_targets(["check", "-x.py", "--json"]) == \
        ["check", "--json", "--", "-x.py"]
    assert main_module.protect_targets(["check", "--json", "k.py"]) == ["check", "--json", "k.py"]
    assert main_module.protect_targets(["layout", "-x.py"]) == ["layout", "-x.py"]
