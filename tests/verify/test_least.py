"""The least-value search of counterexample minimisation: the least value whatever the
models found on the way, and a term already at its least value settled in two probes."""

from __future__ import annotations

import random

import pytest

from argus.verify.least import least_value


def _term(least: int, landing):
    """A probe of a term whose values in models are least..: a sat answer gives the value
    `landing(bound)` picks between least and bound."""
    asked = []

    def probe(bound):
        asked.append(bound)
        return None if bound < least else landing(least, bound)
    return probe, asked


@pytest.mark.parametrize("least", [0, 1, 2, 7, 64, 129, 1000])
@pytest.mark.parametrize("start_over", [0, 1, 5, 300])
def test_the_least_value_whatever_the_models_land_on(least, start_over):
    rng = random.Random(least * 1000 + start_over)
    for landing in (lambda lo, b: b, lambda lo, b: lo, lambda lo, b: rng.randint(lo, b)):
        probe, _ = _term(least, landing)
        assert least_value(probe, least + start_over) == least


def test_a_term_at_its_least_value_takes_two_probes():
    probe, asked = _term(129, lambda lo, b: b)
    assert least_value(probe, 129) == 129
    assert asked == [1, 128]


def test_zero_and_one_take_one_probe_or_none():
    probe, asked = _term(0, lambda lo, b: lo)
    assert least_value(probe, 0) == 0 and asked == []
    assert least_value(probe, 1) == 0 and asked == [0]


def test_probes_stay_within_twice_a_binary_search():
    probe, asked = _term(1000, lambda lo, b: b)
    assert least_value(probe, 1 << 20) == 1000
    assert len(asked) <= 2 * 21
