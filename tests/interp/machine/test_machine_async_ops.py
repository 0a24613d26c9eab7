"""TMA loads and stores, bulk groups and wgmma groups, one semantic at a time."""

import numpy as np
import pytest

from argus.interp.machine import (AsyncOpError, Completed, Faulted, GlobalTensor, Machine,
                                  RegisterInFlightError, round_to_bf16, round_to_e4m3)


def tma_load_box(shape, coords, box, seed=0):
    m = Machine(seed=seed)
    values = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 1
    src = GlobalTensor.from_values("X", values, "fp32")
    buf = m.smem.alloc("box", "fp32", box)
    bar = m.mbarrier("full", count=1)
    got = {}

    def role():
        yield m.arrive(bar, expect_tx=buf.stage_bytes)
        yield m.tma_load(src, coords, buf.whole(), bar)
        yield m.wait(bar, 0)
        got["box"] = yield m.ld_shared(buf.whole())

    m.spawn("loader", role())
    return m.run(), got.get("box"), values, bar


def test_tma_load_copies_the_box_and_completes_the_phase():
    result, box, x, bar = tma_load_box((6, 10), (2, 4), (3, 4))
    assert result.ok and bar.completed_phases == 1 and bar.tx_count == 0
    np.testing.assert_array_equal(box, x[2:5, 4:8])


def test_tma_load_zero_fills_out_of_bounds_and_counts_the_full_box():
    result, box, x, bar = tma_load_box((6, 10), (4, 8), (4, 4))   # rows 4..7, cols 8..11
    assert result.ok and bar.completed_phases == 1  # expect_tx of the full 64 B box sufficed
    want = np.zeros((4, 4), np.float32)
    want[:2, :2] = x[4:6, 8:10]
    np.testing.assert_array_equal(box, want)
    _, box, _, _ = tma_load_box((6, 10), (-2, -1), (4, 4))          # negative coordinates
    want = np.zeros((4, 4), np.float32)
    want[2:, 1:] = x[0:2, 0:3]
    np.testing.assert_array_equal(box, want)
    _, box, _, _ = tma_load_box((6, 10), (7, 0), (2, 2))            # entirely outside
    np.testing.assert_array_equal(box, np.zeros((2, 2)))


def test_tma_load_that_lands_more_bytes_than_expected_is_a_fault():
    m = Machine()
    src = GlobalTensor.from_values("X", np.ones((8, 8)), "bf16")
    buf = m.smem.alloc("b", "bf16", (8, 8))
    bar = m.mbarrier("full", count=1)
    m.spawn("p", iter([m.arrive(bar, expect_tx=64), m.tma_load(src, (0, 0), buf.whole(), bar)]))
    result = m.run()
    assert isinstance(result, Faulted)
    # the first band (64 B) completes the phase; the second underflows the next one
    assert "tx-count underflow, 64 bytes landed but only 0 expected" in str(result.error)


def test_tma_load_lands_in_bands_and_a_reader_skipping_the_wait_sees_half_a_tile():
    partial = 0
    for seed in range(30):
        m = Machine(seed=seed, tma_pieces=2, detect_races=False)
        src = GlobalTensor.from_values("X", np.ones((8, 4)), "fp32")
        buf = m.smem.alloc("b", "fp32", (8, 4))
        bar = m.mbarrier("full", count=1)
        seen = []

        def producer():
            yield m.arrive(bar, expect_tx=buf.stage_bytes)
            yield m.tma_load(src, (0, 0), buf.whole(), bar)

        def impatient():  # polls the tile instead of waiting on `full`
            while not seen or seen[-1] < 32:
                seen.append((yield m.ld_shared(buf.whole())).sum())

        m.spawn("producer", producer())
        m.spawn("reader", impatient())
        assert isinstance(m.run(), Completed) and bar.completed_phases == 1
        assert set(seen) <= {0, 16, 32}
        partial += 16 in seen
    assert partial > 0, "no seed observed one band landed and the other not"


def test_tma_issue_errors_are_named():
    m = Machine()
    src = GlobalTensor.from_values("X", np.ones((8, 8)), "bf16")
    buf = m.smem.alloc("b", "fp32", (8, 8))
    bar = m.mbarrier("full", count=1)
    m.spawn("p", iter([m.tma_load(src, (0, 0), buf.whole(), bar)]))
    result = m.run()
    assert isinstance(result, Faulted) and "element types differ" in str(result.error)
    m = Machine()
    buf = m.smem.alloc("b", "bf16", (8, 8))
    bar = m.mbarrier("full", count=1)
    m.spawn("p", iter([m.tma_load(src, (0, 0, 0), buf.whole(), bar)]))
    result = m.run()
    assert isinstance(result.error, AsyncOpError) and "rank 2" in str(result.error)


def test_bulk_store_drops_out_of_bounds_and_wait_group_leaves_n_pending():
    for seed in range(15):
        m = Machine(seed=seed)
        tiles = m.smem.alloc("t", "fp32", (4, 4), stages=2)
        out = GlobalTensor.zeros("C", (6, 4), "fp32")
        pending_after_wait1 = []

        def storer():
            for s in range(2):
                yield m.st_shared(tiles.stage(s), np.full((4, 4), s + 1.0))
            yield m.fence_proxy_async()
            for s in range(2):
                yield m.tma_store(tiles.stage(s), out, (4 * s, 0))  # second box half outside
                yield m.bulk_commit()
            yield m.bulk_wait(1)
            agent = m.agents[0]
            pending_after_wait1.append(agent.bulk_groups.pending_groups())
            (remaining,) = agent.bulk_groups.committed  # only the newest group may remain
            assert remaining[0].coords == (4, 0)
            yield m.bulk_wait(0)
            pending_after_wait1.append(agent.bulk_groups.pending_groups())

        m.spawn("epilogue", storer())
        result = m.run()
        assert result.ok, str(result)
        assert pending_after_wait1[0] <= 1 and pending_after_wait1[1] == 0
        want = np.vstack([np.full((4, 4), 1.0), np.full((2, 4), 2.0)])
        np.testing.assert_array_equal(out.values(), want)


def wgmma_run(seed, waits, groups=3, k=16):
    """Issue `groups` committed wgmma groups, then wgmma.wait_group(n) for n in `waits`."""
    m = Machine(seed=seed)
    rng = np.random.default_rng(seed)
    a = m.smem.alloc("a", "bf16", (64, k), stages=groups)
    b = m.smem.alloc("b", "bf16", (k, 16), stages=groups)
    acc = m.fragment("acc", (64, 16))
    av = [round_to_bf16(rng.standard_normal((64, k))) for _ in range(groups)]
    bv = [round_to_bf16(rng.standard_normal((k, 16))) for _ in range(groups)]
    seen = []

    def mma():
        for g in range(groups):
            yield m.st_shared(a.stage(g), av[g])
            yield m.st_shared(b.stage(g), bv[g])
        yield m.fence_proxy_async()
        yield m.wgmma_fence()
        for g in range(groups):
            yield m.wgmma(acc, a.stage(g), b.stage(g))
            yield m.wgmma_commit()
        for n in waits:
            yield m.wgmma_wait(n)
            ops, op = [], m.agents[0].last_wgmma
            while op is not None:
                ops.insert(0, op)
                op = op.previous
            seen.append((n, [op.landed for op in ops]))

    m.spawn("mma", mma())
    result = m.run()
    ref = sum(x.astype(np.float64) @ y for x, y in zip(av, bv))
    return result, acc, ref, seen


def test_wgmma_wait_group_semantics_and_fp32_accumulation():
    for seed in range(10):
        result, acc, ref, seen = wgmma_run(seed, waits=[2, 1, 0])
        assert result.ok, str(result)
        for n, landed in seen:  # wait_group(n): every group but the n newest has landed
            assert all(landed[:3 - n]), (seed, n, landed)
        np.testing.assert_allclose(acc.read(), ref, rtol=1e-5, atol=1e-4)


def test_accumulator_is_off_limits_until_every_group_retired():
    result, acc, _, _ = wgmma_run(0, waits=[1])
    assert acc.in_flight == 1     # the newest group was never waited for
    assert [h.kind for h in result.hazards] == ["unwaited-async"]
    assert "mma finished with 1 wgmma(s) never retired" in str(result.hazards[0])
    with pytest.raises(RegisterInFlightError, match="1 wgmma"):
        acc.read()


def test_wgmma_without_fence_is_a_fault():
    m = Machine()
    a = m.smem.alloc("a", "bf16", (64, 16))
    b = m.smem.alloc("b", "bf16", (16, 8))
    acc = m.fragment("acc", (64, 8))
    m.spawn("mma", iter([m.wgmma(acc, a.whole(), b.whole())]))
    result = m.run()
    assert isinstance(result.error, RegisterInFlightError)
    assert "wgmma.fence" in str(result.error)


def test_wgmma_register_a_operand_transposed_b_and_fp8():
    rng = np.random.default_rng(3)
    a_vals = round_to_e4m3(rng.standard_normal((64, 32)) * 4)
    bt_vals = round_to_e4m3(rng.standard_normal((16, 32)) * 4)   # B stored N x K (K-major)
    m = Machine(seed=3)
    bt = m.smem.alloc("bt", "e4m3", (16, 32))
    acc = m.fragment("acc", (64, 16))
    a_regs = m.fragment("a_regs", (64, 32))
    a_regs.write(a_vals)
    assert a_regs.needs_fence

    def mma():
        yield m.st_shared(bt.whole(), bt_vals)
        yield m.fence_proxy_async()
        yield m.wgmma_fence()
        yield m.wgmma(acc, a_regs, bt.whole(), trans_b=True)
        yield m.wgmma_commit()
        yield m.wgmma_wait(0)

    m.spawn("mma", mma())
    result = m.run()
    assert result.ok, str(result)
    assert bt.whole().codes().dtype == np.uint8
    np.testing.assert_allclose(acc.read(), a_vals.astype(np.float64) @ bt_vals.T, rtol=1e-5)


def test_wgmma_shape_mismatch_is_named():
    m = Machine()
    a = m.smem.alloc("a", "bf16", (64, 16))
    b = m.smem.alloc("b", "bf16", (32, 8))
    acc = m.fragment("acc", (64, 8))
    m.spawn("mma", iter([m.wgmma_fence(), m.wgmma(acc, a.whole(), b.whole())]))
    result = m.run()
    assert isinstance(result.error, AsyncOpError) and "do not chain" in str(result.error)
