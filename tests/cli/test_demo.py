"""`argus demo`: atoms checked against three sources and drawn; disagreements reported."""

import numpy as np

from argus.cli import atom_report
from argus.cli.main import main
from argus.layout.hopper import get_atom

SOME_ATOMS = ["wgmma_acc_m64n16", "wgmma_a_rs_*", "ldmatrix_x4_trans", "stmatrix_x2"]


def test_demo_checks_and_draws_the_chosen_atoms(tmp_path, capsys):
    argv = ["demo", "--out", str(tmp_path), "--no-gemm"]
    for pattern in SOME_ATOMS:
        argv += ["--atom", pattern]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "GPU:" in out
    chosen = ["wgmma_acc_m64n16", "wgmma_a_rs_16bit", "wgmma_a_rs_8bit", "ldmatrix_x4_trans",
              "stmatrix_x2"]
    table = [line.split() for line in out.splitlines() if line.split()[:1] in ([n] for n in chosen)]
    assert [row[0] for row in table] == chosen
    assert all(row[5:7] == ["ok", "ok"] for row in table)  # bijective, PTX formula
    assert sorted(p.stem for p in tmp_path.glob("*.svg")) == sorted(chosen)


def test_demo_takes_the_dsl_gemm_through_the_stages_here(capsys):
    assert main(["demo", "--no-draw", "--atom", "ldmatrix_x1"]) == 0
    out = capsys.readouterr().out
    gemm = out[out.index("DSL GEMM"):].splitlines()
    interp = next(line for line in gemm if "interpreter" in line)
    assert interp.split()[0] == "ok" and "tails in M, N and K" in interp
    assert any("generated CUDA" in line and line.split()[0] == "ok" for line in gemm)
    assert any(("GPU run" in line or "H200 run" in line) for line in gemm)


def test_demo_unknown_atom_pattern_exits_2(capsys):
    assert main(["demo", "--atom", "mma_sync_*", "--no-draw"]) == 2
    assert "no atom matches 'mma_sync_*'" in capsys.readouterr().err


class ToyTV:
    """4x2 tile, 4 threads x 2 values; coord(t, v) = (t, v) unless `broken`."""

    name, threads, values, tile = "toy", 4, 2, (4, 2)

    def __init__(self, broken=False):
        self.broken = broken

    def owner_table(self):
        if self.broken:
            raise ValueError("toy: element (3, 1) has no owner")
        return np.array([[0, 0], [1, 1], [2, 2], [3, 3]]), np.array([[0, 1]] * 4)


def test_broken_bijection_is_reported_and_not_drawn():
    (bijective, formula, hardware), tabled = atom_report.check_atom(ToyTV(True), None, None)
    assert bijective == "element (3, 1) has no owner" and tabled is None


def test_formula_disagreement_names_the_first_thread_and_value():
    threads, values = ToyTV().owner_table()
    assert atom_report.compare(ToyTV(), threads, values, lambda t, v: (t, v), "PTX") == "ok"
    off = atom_report.compare(ToyTV(), threads, values, lambda t, v: (t, v ^ (t == 2)), "PTX")
    assert off == "T2 V0: layout (2, 0), PTX (2, 1)"
    assert atom_report.compare(ToyTV(), threads, values, None, "PTX") == "skipped"


def test_hardware_tables_are_read_per_atom():
    probe = {"ldmatrix": {"x2": [[(lane % 2, lane // 4, v) for v in range(4)]
                                 for lane in range(32)]}}
    table = atom_report.probe_table(get_atom("ldmatrix_x2"), probe)
    assert table[5][3] == (8 * 1 + 1, 3)  # matrix 1 is rows 8..15 of the stacked tile
    assert atom_report.probe_table(get_atom("ldmatrix_x4"), probe) is None
    assert atom_report.probe_table(get_atom("wgmma_acc_m64n8"), None) is None


def test_hardware_mismatch_is_reported():
    tv = get_atom("ldmatrix_x1")
    threads, values = tv.owner_table()
    wrong = [[tuple(int(x) for x in tv.coord(t, v)) for v in range(2)] for t in range(32)]
    assert atom_report.compare(tv, threads, values, wrong, "hardware") == "ok"
    wrong[7][1] = (0, 0)
    assert atom_report.compare(tv, threads, values, wrong, "hardware").startswith(
        "T7 V1: layout")
    assert "another shape" in atom_report.compare(tv, threads, values, wrong[:16], "hardware")


def test_bench_is_a_subcommand():
    """`argus bench gemm` is what the README and scripts/device_session.sh call."""
    from argus.cli.main import build_parser

    args = build_parser().parse_args(["bench", "gemm", "--timing", "--shapes", "128x128x128"])
    assert args.what == "gemm" and args.rest == ["--timing", "--shapes", "128x128x128"]
