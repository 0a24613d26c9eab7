"""Shared memory: typed staged buffers, race detection, the missing proxy-fence detector."""

import numpy as np
import pytest

from argus.interp.machine import Completed, GlobalTensor, Machine, MemoryModelError


def test_buffers_are_aligned_staged_and_typed():
    m = Machine()
    a = m.smem.alloc("a", "bf16", (64, 16), stages=3)
    b = m.smem.alloc("b", "fp32", (8, 8))
    assert a.stage_bytes == 64 * 16 * 2 and a.nbytes == 3 * 2048
    assert b.offset % 1024 == 0 and b.offset >= a.nbytes
    s1 = a.stage(1)
    assert (s1.lo, s1.hi, s1.shape) == (2048, 4096, (64, 16))
    assert s1.codes().dtype == np.uint16 and b.whole().codes().dtype == np.float32
    band = s1.rows(16, 48)
    assert (band.lo, band.hi, band.shape) == (2048 + 16 * 32, 2048 + 48 * 32, (32, 16))
    assert "rows 16..48" in band.describe() and band.rows(0, 8).describe().count("16..24")
    with pytest.raises(MemoryModelError, match="rows 0..65 out of range"):
        s1.rows(0, 65)
    with pytest.raises(MemoryModelError, match="stage 3 out of range.*3 stages"):
        a.stage(3)
    with pytest.raises(MemoryModelError, match="allocated twice"):
        m.smem.alloc("a", "bf16", (1,))
    with pytest.raises(MemoryModelError, match="exceeds"):
        m.smem.alloc("huge", "fp32", (256, 256))
    with pytest.raises(ValueError, match="unknown element type 'bf8'"):
        m.smem.alloc("c", "bf8", (1,))


def two_agents(sync: str, seed=0):
    """Writer stores a tile, reader loads it; `sync` picks the ordering between them."""
    m = Machine(seed=seed)
    buf = m.smem.alloc("tile", "fp32", (4, 4))
    bar = m.mbarrier("ready", count=1)
    got = {}

    def writer():
        yield m.st_shared(buf.whole(), np.arange(16.0).reshape(4, 4))
        if sync == "mbarrier":
            yield m.arrive(bar)
        if sync == "bar.sync":
            yield m.bar_sync(1, 256)

    def reader():
        if sync == "mbarrier":
            yield m.wait(bar, 0)
        if sync == "bar.sync":
            yield m.bar_sync(1, 256)
        got["v"] = yield m.ld_shared(buf.whole())

    m.spawn("writer", writer())
    m.spawn("reader", reader())
    return m.run(), got.get("v")


def test_unordered_store_and_load_is_a_race():
    result, _ = two_agents("none")
    assert isinstance(result, Completed) and not result.ok
    (hazard,) = result.hazards
    assert hazard.kind == "race" and "tile" in str(hazard)
    assert "writer" in str(hazard) and "reader" in str(hazard)


@pytest.mark.parametrize("sync", ["mbarrier", "bar.sync"])
def test_barrier_orders_the_accesses(sync):
    for seed in range(10):
        result, v = two_agents(sync, seed)
        assert result.ok, str(result)
        np.testing.assert_array_equal(v, np.arange(16.0).reshape(4, 4))


def store_from_smem(fence: bool, seed=0):
    """Two warpgroups write an epilogue tile with st.shared; one issues the TMA store."""
    m = Machine(seed=seed)
    tile = m.smem.alloc("epi", "bf16", (8, 16))
    out = GlobalTensor.zeros("C", (8, 16), "bf16")
    values = np.arange(128, dtype=np.float32).reshape(8, 16) / 4

    def storer():
        yield m.st_shared(tile.whole(), values)
        if fence:
            yield m.fence_proxy_async()
        yield m.bar_sync(2, 128)
        yield m.tma_store(tile.whole(), out, (0, 0))
        yield m.bulk_commit()
        yield m.bulk_wait(0)

    m.spawn("epilogue", storer())
    return m.run(), out.values(), values


def test_missing_fence_proxy_async_before_tma_store_is_reported():
    result, got, want = store_from_smem(fence=False)
    kinds = [h.kind for h in result.hazards]
    assert kinds == ["missing-proxy-fence"], kinds
    assert "fence.proxy.async" in str(result.hazards[0]) and "TMA store" in str(result.hazards[0])
    np.testing.assert_array_equal(got, want)  # the data is right here; the GPU may not be


def test_fence_proxy_async_silences_the_detector():
    result, got, want = store_from_smem(fence=True)
    assert result.ok, str(result)
    np.testing.assert_array_equal(got, want)


def test_wgmma_reading_generic_stores_needs_the_fence_too():
    for fence in (False, True):
        m = Machine()
        a = m.smem.alloc("a", "bf16", (64, 16))
        b = m.smem.alloc("b", "bf16", (16, 8))
        acc = m.fragment("acc", (64, 8))

        def mma():
            yield m.st_shared(a.whole(), np.ones((64, 16)))
            yield m.st_shared(b.whole(), np.ones((16, 8)))
            if fence:
                yield m.fence_proxy_async()
            yield m.wgmma_fence()
            yield m.wgmma(acc, a.whole(), b.whole())
            yield m.wgmma_commit()
            yield m.wgmma_wait(0)

        m.spawn("mma", mma())
        result = m.run()
        fences = [h for h in result.hazards if h.kind == "missing-proxy-fence"]
        assert len(fences) == (0 if fence else 2)
        np.testing.assert_array_equal(acc.read(), np.full((64, 8), 16.0))


def reader_fences(who: str, seed=0):
    """A writer stores a tile with st.shared and arrives; a reader waits, and a TMA store of
    its reads the tile (async proxy). `who` fences between: "writer" (after its store),
    "reader" (after its wait: it has acquired the write), "bystander" (a third agent that
    never synchronised with the writer) or "none"."""
    m = Machine(seed=seed)
    tile = m.smem.alloc("epi", "bf16", (8, 16))
    out = GlobalTensor.zeros("C", (8, 16), "bf16")
    bar = m.mbarrier("ready", count=1)

    def writer():
        yield m.st_shared(tile.whole(), np.ones((8, 16)))
        if who == "writer":
            yield m.fence_proxy_async()
        yield m.arrive(bar)

    def reader():
        yield m.wait(bar, 0)
        if who == "reader":
            yield m.fence_proxy_async()
        yield m.tma_store(tile.whole(), out, (0, 0))
        yield m.bulk_commit()
        yield m.bulk_wait(0)

    def bystander():
        yield m.fence_proxy_async()

    m.spawn("writer", writer())
    m.spawn("reader", reader())
    if who == "bystander":
        m.spawn("bystander", bystander())
    return m.run()


@pytest.mark.parametrize("who, fenced", [("writer", True), ("reader", True),
                                         ("bystander", False), ("none", False)])
def test_a_fence_counts_where_it_is_on_the_path_from_the_write_to_the_read(who, fenced):
    """The reader's fence after its acquire orders the write before its async read (what a
    cp.async gather's consumer does: the writer cannot fence copies that land later); a fence
    by a thread that never saw the write does not."""
    for seed in range(4):
        result = reader_fences(who, seed)
        kinds = [h.kind for h in result.hazards]
        assert kinds == ([] if fenced else ["missing-proxy-fence"]), (who, seed, kinds)


def test_an_access_of_several_ranges_races_and_supersedes_by_its_bytes():
    """access_spans: one access of a thread's chunks; overlap and cover are by bytes, not by
    the bounding range."""
    from argus.interp.machine.clocks import ClockOwner
    from argus.interp.machine.memory import SharedMemory
    mem = SharedMemory(4096)
    a, b = ClockOwner(1, "a"), ClockOwner(2, "b")
    assert mem.access_spans([(0, 16), (128, 144)], "x", True, "generic", a.event(), "A") == []
    # inside the bounding range but between the spans: no overlap, no race
    assert mem.access_spans([(16, 128)], "x", True, "generic", b.event(), "B") == []
    hazards = mem.access_spans([(130, 132)], "x", False, "generic", b.event(), "read")
    assert [h.kind for h in hazards] == ["race"] and "A" in str(hazards[0])
