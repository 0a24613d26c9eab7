"""The producer/consumer ring computes the GEMM for every seed; its seeded bugs are caught."""

import numpy as np
import pytest

from argus.interp.machine import Completed, Deadlock, Faulted, RegisterInFlightError
from machine_ring_gemm import make_inputs, run_ring_gemm

SEEDS = range(30)


@pytest.fixture(scope="module")
def problem():
    a, b = make_inputs(np.random.default_rng(2026), 64, 32, 88)  # K=88: last k-tile is partial
    return a, b, a.astype(np.float64) @ b.astype(np.float64)


def first_wrong_element(c, ref):
    bad = np.argwhere(~np.isclose(c, ref, rtol=1e-4, atol=1e-3))
    return None if len(bad) == 0 else tuple(int(i) for i in bad[0])


@pytest.mark.parametrize("stages,overlap", [(2, False), (3, False), (2, True), (4, True)])
def test_correct_protocol_is_right_for_every_seed(problem, stages, overlap):
    a, b, ref = problem
    for seed in SEEDS:
        result, c = run_ring_gemm(a, b, seed, stages=stages, overlap=overlap)
        assert isinstance(result, Completed) and result.ok, f"seed {seed}: {result}"
        assert first_wrong_element(c, ref) is None, f"seed {seed}"


def test_a_seed_replays_its_run_and_seeds_differ(problem):
    a, b, _ = problem
    traces = [tuple(run_ring_gemm(a, b, seed)[0].trace) for seed in SEEDS]
    assert traces[3] == tuple(run_ring_gemm(a, b, 3)[0].trace)
    assert len(set(traces)) >= len(traces) - 2, "the scheduler hardly varies the interleaving"
    assert any(t.startswith("land TMA load") for t in traces[0])


@pytest.mark.parametrize("overlap", [False, True])
def test_stage_reused_before_wgmma_wait_gives_a_wrong_answer(problem, overlap, capsys):
    a, b, ref = problem
    wrong = []
    for seed in SEEDS:
        result, c = run_ring_gemm(a, b, seed, bug="early_release", overlap=overlap,
                                  detect_races=False)
        assert isinstance(result, Completed), f"seed {seed}: {result}"
        where = first_wrong_element(c, ref)
        if where is not None:
            wrong.append((seed, where, float(c[where]), float(ref[where])))
    assert wrong, "no seed exposed the early release"
    seed, where, got, want = wrong[0]
    with capsys.disabled():
        print(f"\n  early release (overlap={overlap}): seed {seed} gives C{list(where)} = "
              f"{got:.4f}, reference {want:.4f}; {len(wrong)}/{len(SEEDS)} seeds wrong")
    assert abs(got - want) > 1e-2


def test_race_detector_flags_the_early_release_on_every_seed(problem):
    a, b, _ = problem
    for seed in range(10):
        result, _ = run_ring_gemm(a, b, seed, bug="early_release")
        races = [h for h in result.hazards if h.kind == "race"]
        assert races, f"seed {seed}: early release not reported"
        assert "TMA load" in str(races[0]) and "wgmma read" in str(races[0])


def test_parity_bug_deadlocks_and_names_the_barrier():
    a, b = make_inputs(np.random.default_rng(5), 64, 32, 256)
    ref = a.astype(np.float64) @ b
    kinds = set()
    deadlock = None
    for seed in range(20):
        result, c = run_ring_gemm(a, b, seed, stages=2, bug="parity")
        kinds.add(type(result).__name__)
        correct = isinstance(result, Completed) and result.ok and \
            first_wrong_element(c, ref) is None
        assert not correct, f"seed {seed}: the parity bug went unnoticed"
        if isinstance(result, Deadlock) and deadlock is None:
            deadlock = result
        if isinstance(result, Faulted):
            assert "more arrivals than the init count" in str(result.error)
    assert deadlock is not None, kinds
    blocked = {b.agent: b for b in deadlock.blocked}
    assert blocked["consumer"].barrier.startswith("full[") and blocked["consumer"].parity in (0, 1)
    assert "mbarrier 'full[" in str(deadlock)


def test_parity_bug_with_three_stages_reads_stale_tiles(problem):
    a, b, ref = problem
    for seed in range(10):
        result, c = run_ring_gemm(a, b, seed, stages=3, bug="parity")
        assert isinstance(result, Completed)
        assert first_wrong_element(c, ref) is not None, f"seed {seed}"


def test_reading_the_accumulator_before_the_wait_is_a_fault():
    from argus.interp.machine import Machine
    m = Machine(seed=0)
    acc = m.fragment("acc", (64, 8))
    sa = m.smem.alloc("a", "bf16", (64, 16))
    sb = m.smem.alloc("b", "bf16", (16, 8))

    def consumer():
        yield m.wgmma_fence()
        yield m.wgmma(acc, sa.whole(), sb.whole())
        yield m.wgmma_commit()
        acc.read()  # missing wgmma.wait_group 0

    m.spawn("consumer", consumer())
    result = m.run()
    assert isinstance(result, Faulted) and isinstance(result.error, RegisterInFlightError)
    assert "consumer" in str(result.error) and "'acc'" in str(result.error)
