"""`argus bench gemm --random N --seed S` (argus/bench/gemm_bench.py): the draw is printed
(--list stops there, no GPU needed), conflicting options are usage errors, and the timing
rows are summarised per drawn family and over M <= 64."""

import math

import pytest

from argus.bench.gemm_bench import family_geomeans, main
from argus.bench.gemm_shapes import draw


def test_list_prints_the_seeded_draw_and_needs_no_gpu(capsys):
    assert main(["--random", "6", "--seed", "4", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "6 shapes drawn with seed 4:"
    assert [line.split()[0] for line in lines[1:]] == [s.text() for s in draw(6, 4)]


@pytest.mark.parametrize("argv", [["--random", "4", "--shapes", "8x8x8"], ["--list"],
                                  ["--random", "0"]])
def test_conflicting_or_empty_requests_are_usage_errors(argv):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2


def test_geomeans_per_family_and_for_small_m():
    shapes = draw(10, seed=2)
    rows = [{"m": s.m, "n": s.n, "k": s.k, "status": "ok",
             "ratio_to_peer": 0.5 if s.family == "decode" else 1.0} for s in shapes]
    rows.append({"m": 1, "n": 8, "k": 8, "status": "error", "ratio_to_peer": None})
    means = family_geomeans(rows, shapes)
    assert means["decode"] == pytest.approx(0.5) and means["prefill"] == pytest.approx(1.0)
    small = [r["ratio_to_peer"] for r in rows[:-1] if r["m"] <= 64]
    assert small         # decode M of this draw: some are <= 64
    assert means["m<=64"] == pytest.approx(math.exp(sum(map(math.log, small)) / len(small)))
