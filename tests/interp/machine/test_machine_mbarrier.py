"""mbarrier phase / parity / tx-count semantics, step by step, and its misuse errors."""

import pytest

from argus.interp.machine import Mbarrier, MbarrierError


def fresh(count=2):
    bar = Mbarrier("bar")
    bar.init(count)
    return bar


def test_fresh_barrier_is_in_phase_zero_and_passes_a_wait_on_parity_one():
    bar = fresh()
    assert (bar.completed_phases, bar.phase_parity, bar.pending, bar.tx_count) == (0, 0, 2, 0)
    assert bar.test_wait_parity(1)      # "the phase before the first" counts as complete
    assert not bar.test_wait_parity(0)  # phase 0 is still running


def test_phase_completes_on_the_last_arrival_and_flips_parity():
    bar = fresh(2)
    assert bar.arrive() == 0
    assert (bar.pending, bar.completed_phases) == (1, 0)
    assert not bar.test_wait_parity(0)
    bar.arrive()
    assert (bar.pending, bar.completed_phases, bar.phase_parity) == (2, 1, 1)
    assert bar.test_wait_parity(0) and not bar.test_wait_parity(1)
    bar.arrive(count=2)
    assert (bar.completed_phases, bar.phase_parity) == (2, 0)
    assert bar.test_wait_parity(1) and not bar.test_wait_parity(0)


def test_phase_waits_for_tx_count_as_well_as_arrivals():
    bar = fresh(1)
    bar.arrive(expect_tx=96)            # arrive.expect_tx: the arrival alone is not enough
    assert (bar.pending, bar.tx_count, bar.completed_phases) == (0, 96, 0)
    bar.complete_tx(64)
    assert (bar.tx_count, bar.completed_phases) == (32, 0)
    bar.complete_tx(32)
    assert (bar.tx_count, bar.completed_phases, bar.pending) == (0, 1, 1)
    assert bar.test_wait_parity(0)


def test_expect_tx_without_arrival_then_arrive_and_bytes_in_either_order():
    bar = fresh(1)
    bar.expect_tx(16)
    bar.complete_tx(16)
    assert bar.completed_phases == 0    # tx reached 0 but the arrival is still pending
    bar.arrive()
    assert bar.completed_phases == 1


def test_arrive_on_uninitialised_barrier_is_an_error():
    bar = Mbarrier("full[0]")
    with pytest.raises(MbarrierError, match=r"arrive on mbarrier 'full\[0\]' before mbarrier.init"):
        bar.arrive()
    with pytest.raises(MbarrierError, match="before mbarrier.init"):
        bar.test_wait_parity(0)


def test_tx_underflow_is_an_error():
    bar = fresh(1)
    bar.arrive(expect_tx=100)
    with pytest.raises(MbarrierError, match=r"tx-count underflow, 128 bytes landed but only 100"):
        bar.complete_tx(128)


def test_arrivals_beyond_the_count_are_an_error():
    bar = fresh(1)
    bar.arrive(expect_tx=8)             # pending 0, tx 8: the phase is not over yet
    with pytest.raises(MbarrierError, match="more arrivals than the init count"):
        bar.arrive()
    with pytest.raises(MbarrierError, match="2 arrival"):
        fresh(1).arrive(count=2)


def test_double_init_and_bad_arguments():
    bar = fresh(1)
    with pytest.raises(MbarrierError, match="initialised twice"):
        bar.init(1)
    bar.inval()
    bar.init(3)
    assert bar.pending == 3
    with pytest.raises(MbarrierError, match="arrival count 0"):
        Mbarrier("x").init(0)
    with pytest.raises(MbarrierError, match="parity must be 0 or 1"):
        fresh().test_wait_parity(2)


def test_relaxed_tx_allows_bytes_before_expect():
    bar = Mbarrier("peer", strict_tx=False)  # PTX allows a transiently negative tx-count
    bar.init(1)
    bar.complete_tx(32)
    assert bar.tx_count == -32
    bar.arrive(expect_tx=32)
    assert bar.completed_phases == 1
