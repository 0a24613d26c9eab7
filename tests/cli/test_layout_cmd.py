"""`argus layout show/list`: drawings written, user errors as one line and exit status 2."""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from argus.cli.main import main
from argus.layout.hopper import atom_names, get_atom

REPO = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"


def cell_count(path):
    return sum(1 for g in ET.parse(path).getroot().iter(f"{SVG}g") if g.get("class") == "cell")


def test_show_notation_writes_svg(tmp_path, capsys):
    out = tmp_path / "x.svg"
    assert main(["layout", "show", "(4,8):(8,1)", "-o", str(out)]) == 0
    assert cell_count(out) == 32
    assert str(out) in capsys.readouterr().out


def test_show_atom_writes_one_cell_per_element(tmp_path):
    name = atom_names()[0]
    rows, cols = get_atom(name).owner_table()[0].shape
    out = tmp_path / "atom.svg"
    assert main(["layout", "show", name, "-o", str(out), "--thread", "0"]) == 0
    assert cell_count(out) == rows * cols


def test_show_png(tmp_path):
    pytest.importorskip("PIL")
    out = tmp_path / "x.png"
    assert main(["layout", "show", "(2,4):(4,1)", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_list_names_every_atom(capsys):
    assert main(["layout", "list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(atom_names())


def error_of(argv, capsys):
    """(exit status, stderr) of a run that must fail."""
    status = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, err


def test_bad_layout_string_exits_2_pointing_at_it(tmp_path, capsys):
    status, err = error_of(["layout", "show", "(4,8):(8,", "-o", str(tmp_path / "x.svg")],
                           capsys)
    assert status == 2
    headline, shown, caret = err.rstrip("\n").splitlines()
    assert headline.startswith("argus: error: bad layout '(4,8):(8,'")
    assert "at column 10" in headline
    assert caret.index("^") == shown.index("(4,8):(8,") + len("(4,8):(8,")
    assert not (tmp_path / "x.svg").exists()


def test_incongruent_stride_is_a_usage_error(tmp_path, capsys):
    status, err = error_of(["layout", "show", "(4,8):(8,1,2)", "-o", str(tmp_path / "x.svg")],
                           capsys)
    assert status == 2 and "congruent" in err


def test_unknown_atom_exits_2_pointing_at_list(tmp_path, capsys):
    status, err = error_of(["layout", "show", "wgmma_nonsense", "-o", str(tmp_path / "x.svg")],
                           capsys)
    assert status == 2
    assert "unknown atom 'wgmma_nonsense'" in err and "argus layout list" in err


def test_unknown_suffix_exits_2(tmp_path, capsys):
    status, err = error_of(["layout", "show", "(4,8):(8,1)", "-o", str(tmp_path / "x.pdf")],
                           capsys)
    assert status == 2
    assert "unknown suffix '.pdf'" in err and ".svg" in err


def test_thread_on_a_plain_layout_exits_2(tmp_path, capsys):
    status, err = error_of(["layout", "show", "(4,8):(8,1)", "-o", str(tmp_path / "x.svg"),
                            "--thread", "3"], capsys)
    assert status == 2 and "--cell" in err


def test_missing_action_and_bad_flags_exit_2(capsys):
    assert error_of(["layout"], capsys)[0] == 2
    assert error_of(["layout", "show", "(4,8):(8,1)"], capsys)[0] == 2  # no -o
    assert error_of([], capsys)[0] == 2


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("argus 0.")


def run_argus(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "argus.cli.main", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_subprocess_show_and_error(tmp_path):
    done = run_argus("layout", "show", "(4,8):(8,1)", "-o", "x.svg", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert cell_count(tmp_path / "x.svg") == 32
    bad = run_argus("layout", "show", "(4,8):(8,1)", "-o", "x.jpeg", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.startswith("argus: error:") and "Traceback" not in bad.stderr
