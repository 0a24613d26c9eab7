"""The GEMM configuration model: its space holds only configurations the kernels accept,
its prices follow the shape (waves, tile quantisation, split-K), its choice is one of the
space, and the fitting tool's regret is what it says."""

import dataclasses
import importlib.util
from pathlib import Path

import pytest

from argus.bench.gemm_shapes import draw
from argus.limits import SM_COUNT
from argus.ops.gemm_configs import knobs_to_config
from argus.ops import gemm_model as gm
from argus.ops.gemm_model import RATES, choose, predict, ranked, space

SHAPES = [(s.m, s.n - s.n % 8 or 8, s.k - s.k % 8 or 8) for s in draw(25, seed=3)]


@pytest.mark.parametrize("layout", ["kn", "nk"])
def test_every_configuration_of_the_space_is_accepted(layout):
    for m, n, k in SHAPES:
        configs = space(m, n, k, layout)
        assert configs, (m, n, k)
        for knobs in configs:
            knobs_to_config(knobs, layout, m, n, k)       # raises when refused


def test_the_choice_is_the_cheapest_of_the_space():
    for m, n, k in SHAPES:
        best = choose(m, n, k, "kn")
        assert best in space(m, n, k, "kn")
        off = gm.misaligned(m, n, k, "kn")
        cheapest = min(predict(m, n, k, c, off_pitch=off).us for c in space(m, n, k, "kn"))
        assert predict(m, n, k, best, off_pitch=off).us == cheapest


def test_waves_and_tile_quantisation():
    knobs = {"BM": 128, "BN": 256}
    one = predict(128 * 11, 256 * 12, 4096, knobs)          # 132 tiles: one wave
    two = predict(128 * 11 + 1, 256 * 12, 4096, knobs)      # 144 tiles: a second wave
    assert (one.items, one.rounds, two.rounds) == (SM_COUNT, 1, 2)
    assert two.compute_us > 1.9 * one.compute_us


def test_split_k_fills_the_machine_for_few_tiles():
    m, n, k = 64, 2048, 16384                               # 8 tiles of 64 x 256
    plain = predict(m, n, k, {"BM": 64, "BN": 256})
    split = predict(m, n, k, {"BM": 64, "BN": 256, "split_k": 8})
    assert split.items == 8 * plain.items and split.compute_us < plain.compute_us / 4


def test_decode_and_large_shapes_get_different_tiles():
    assert choose(16, 4096, 4096, "kn")["BM"] == 64
    big = choose(8192, 8192, 8192, "kn")
    # the widest tiles (BN = 192 and 256 measured within 1-4% of each other there, H100)
    assert big["BM"] == 128 and big["BN"] >= 192


def test_ranked_is_sorted():
    prices = [us for us, _ in ranked(1000, 3000, 2000, "nk")]
    assert prices == sorted(prices)


def _fit_tool():
    path = Path(__file__).resolve().parents[2] / "tools" / "fit_gemm_model.py"
    spec = importlib.util.spec_from_file_location("fit_gemm_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fit_regret_is_zero_when_the_model_picks_the_fastest_and_positive_otherwise():
    tool = _fit_tool()
    m, n, k = 4096, 4096, 4096
    configs = space(m, n, k, "kn")
    # measured times equal to the model's prices: the pick is the fastest, no regret
    timed = [(c, predict(m, n, k, c).us / 1e3) for c in configs]
    data = [(1, m, n, k, timed, 0.2, (False, False))]
    assert tool.regret(RATES, data)[0] == pytest.approx(0.0)
    # the model's pick measured 2x slower than the rest: regret log 2 or more
    pick = choose(m, n, k, "kn")
    slow = [(c, (2.0 if c == pick else 1.0) * 0.1) for c in configs]
    assert tool.regret(RATES, [(1, m, n, k, slow, 0.2, (False, False))])[0] == pytest.approx(0.6931, abs=1e-3)
    # a fit on that data moves away from the slow pick
    fitted = tool.fit([(1, m, n, k, slow, 0.2, (False, False))], RATES, rounds=2, restarts=0)
    assert tool.regret(fitted, [(1, m, n, k, slow, 0.2, (False, False))])[0] < 0.6931
    assert dataclasses.is_dataclass(fitted)


def test_row_pitch_off_the_128_byte_grid_by_layout():
    assert gm.misaligned(512, 4096, 4096, "nk") == (False, False)
    assert gm.misaligned(512, 4096, 3304, "nk") == (True, True)      # K rows: both
    assert gm.misaligned(512, 2520, 4096, "kn") == (False, True)     # B's rows are N long
    assert gm.misaligned(512, 2520, 4096, "nk") == (False, False)


def test_off_pitch_operands_fill_slower_when_the_machine_is_busy():
    knobs = {"BM": 128, "BN": 256, "split_k": 1, "cluster_m": 1, "epilogue": "tma_chunks"}
    big = (5760, 2560, 3296)
    aligned = gm.predict(*big, knobs).us
    assert gm.predict(*big, knobs, off_pitch=(True, True)).us > 1.3 * aligned
    small = (128, 256, 3296)                      # one tile: the fill is not shared
    ratio_small = gm.predict(*small, knobs, off_pitch=(True, True)).us / \
        gm.predict(*small, knobs).us
    assert ratio_small < gm.predict(*big, knobs, off_pitch=(True, True)).us / aligned


def test_an_odd_count_of_m_tiles_costs_a_cluster_a_tile():
    one = {"BM": 128, "BN": 256, "split_k": 1, "cluster_m": 1, "epilogue": "tma_chunks"}
    two = dict(one, cluster_m=2)
    assert gm.predict(5 * 128, 256 * 132, 4096, two).items == 6 * 132
    assert gm.predict(5 * 128, 256 * 132, 4096, one).items == 5 * 132


