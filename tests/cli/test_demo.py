"""`argus demo`: every atom checked and drawn; broken atoms and hardware mismatches reported."""

import numpy as np

from argus.cli import atom_report
from argus.cli.main import main
from argus.layout.hopper import atom_names


def test_demo_checks_and_draws_every_atom(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "GPU:" in out
    for name in atom_names():
        assert any(line.startswith(name + " ") for line in out.splitlines()), name
    assert len(list(tmp_path.glob("*.svg"))) == len(atom_names())


class ColumnMajorTV:
    """4x2 tile, 4 threads x 2 values, coord(t, v) = (t, v); `swap` breaks the formula."""

    name = "toy"

    def __init__(self, swap=False):
        self.swap = swap

    def owner_table(self):
        thread = np.array([[0, 0], [1, 1], [2, 2], [3, 3]])
        value = np.array([[0, 1], [0, 1], [0, 1], [0, 1]])
        return thread, value

    def coord(self, t, v):
        if self.swap and (t, v) == (3, 1):
            return (0, 0)
        return (t, v)


def test_own_formula_ok_and_broken():
    assert atom_report.check_own_formula(ColumnMajorTV()) == ("ok", 4, 2)
    verdict, _, _ = atom_report.check_own_formula(ColumnMajorTV(swap=True))
    assert verdict.startswith("coord(T3, V1) = (0, 0) but the owner table says T0 V0")


def test_hardware_mismatch_is_reported():
    thread, value = ColumnMajorTV().owner_table()
    good = {"toy": {"thread": thread.tolist(), "value": value.tolist()}}
    assert atom_report.check_hardware(ColumnMajorTV(), good) == "ok"
    assert atom_report.check_hardware(ColumnMajorTV(), None) == "skipped"
    bad_value = value.copy()
    bad_value[2, 1] = 0
    bad = {"toy": {"thread": thread.tolist(), "value": bad_value.tolist()}}
    assert atom_report.check_hardware(ColumnMajorTV(), bad).startswith(
        "1 elements differ, first (2, 1): hardware T2 V0, here T2 V1")
