"""The random GEMM shape draw (argus/bench/gemm_shapes.py): deterministic per seed, every
family in it, sizes in each family's range, projections from the model table."""

import pytest

from argus.bench.gemm_shapes import (DECODE_M, FAMILIES, MODELS, ODD_SIZE, PREFILL_M, draw,
                                     projection)


def test_the_same_seed_draws_the_same_shapes_and_another_seed_others():
    assert draw(40, seed=7) == draw(40, seed=7)
    assert draw(40, seed=7) != draw(40, seed=8)
    assert draw(40, seed=7)[:13] == draw(13, seed=7)


@pytest.mark.parametrize("seed", range(6))
def test_every_family_is_drawn_within_its_ranges(seed):
    shapes = draw(40, seed)
    assert len(shapes) == 40
    by_family = {f: [s for s in shapes if s.family == f] for f in FAMILIES}
    assert all(len(v) >= 8 for v in by_family.values())
    projections = {projection(m, p) for m in MODELS for p in ("qkv", "o", "gate_up", "down")}
    for s in by_family["decode"]:
        assert DECODE_M[0] <= s.m <= DECODE_M[1] and (s.n, s.k) in projections
    for s in by_family["prefill"]:
        assert PREFILL_M[0] <= s.m <= PREFILL_M[1] and (s.n, s.k) in projections
    for s in by_family["odd"]:
        assert all(ODD_SIZE[0] <= d <= ODD_SIZE[1] for d in (s.m, s.n, s.k))


def test_a_long_draw_spans_the_ranges_and_the_models():
    shapes = draw(400, seed=1)
    decode = [s.m for s in shapes if s.family == "decode"]
    prefill = [s.m for s in shapes if s.family == "prefill"]
    assert min(decode) <= 4 and max(decode) >= 100 and sum(m <= 64 for m in decode) > 40
    assert min(prefill) <= 512 and max(prefill) >= 8192
    assert len({s.source.split()[0] for s in shapes if s.family != "odd"}) >= len(MODELS) - 1
    odd = [s for s in shapes if s.family == "odd"]
    assert 0.3 < sum(s.n % 8 != 0 or s.k % 8 != 0 for s in odd) / len(odd) < 1


def test_projection_sizes_follow_the_model_config():
    assert projection("llama-3-8b", "qkv") == (6144, 4096)          # (32 + 2 * 8) * 128
    assert projection("llama-3-8b", "down") == (4096, 14336)
    assert projection("llama-3-70b", "gate_up") == (57344, 8192)


def test_a_negative_count_is_refused():
    with pytest.raises(ValueError, match="count >= 0"):
        draw(-1)
