"""Clusters of several blocks on the interpreter: the CTAs of a cluster share a machine;
a multicast TMA lands in every CTA of its mask and completes bytes on each receiver's
barrier; a remote arrive reaches the peer's barrier; the cluster barrier joins all CTAs."""

import numpy as np
import pytest

from argus.interp.errors import InterpretError
from argus.interp.evaluator import interpret
from argus.interp.machine import Deadlock, round_to_bf16

from interp_kernels import compile_kernel

# Each CTA of a pair loads half of X's rows and multicasts it to both; each then reads the
# whole tile from its own shared memory, tells its peer it is done (remote arrive) and
# waits for the peer's word before the cluster ends (so no CTA exits while a peer may
# still write into it).
MULTICAST = '''
@kernel(grid=(4,), block=128, cluster=(2, 1, 1))
def k(X: Tensor[64, 64, bf16], Y: Tensor[256, 64, fp32]):
    r = cluster_rank()
    bx = block_id("x")
    buf = smem(bf16, (64, 64), swizzle="128B")
    full = mbarrier(1)
    done = mbarrier(1)
    with elect_one("block"):
        mbarrier_init(full[0], 1)
        mbarrier_init(done[0], 1)
    fence_mbarrier_init()
    cluster_sync()
    with elect_one():
        expect_tx(full[0], nbytes(buf[0]))
        tma_load(tile(buf[0], (32, 64), (r, 0)), tile(X, (32, 64), (r, 0)), full[0],
                 multicast=MASK)
    wait(full[0], 0)
    x = load(buf[0], "blocked")
    store(tile(Y, (64, 64), (bx, 0)), cast(x, fp32) * 2.0 + RANKTERM)
    with elect_one():
        arrive(done[0], cta=1 - r)
    wait(done[0], 0)
    cluster_sync()
'''


def _kernel(mask="3", rank_term="0.0"):
    return compile_kernel(MULTICAST.replace("MASK", mask).replace("RANKTERM", rank_term))


def _x(seed=0):
    return round_to_bf16(np.random.default_rng(seed).standard_normal((64, 64)).astype(np.float32))


def _run(kernel, x, **kw):
    return interpret(kernel, {"X": x, "Y": np.full((256, 64), np.nan, np.float32)}, **kw)


@pytest.mark.parametrize("mode", ["value", "exact"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multicast_fills_both_ctas(seed, mode):
    x = _x(seed)
    result = _run(_kernel(), x, seed=seed, mode=mode)
    assert result.ok, result.failures()
    np.testing.assert_array_equal(result.outputs["Y"], np.tile(2 * x, (4, 1)))
    assert len(result.failures()) == 0 and len({id(r) for r in result.runs.values()}) == 2


def test_blocks_of_a_cluster_run_together():
    x = _x()
    result = _run(_kernel(), x, blocks=[3])     # block 3 is rank 1 of the second cluster
    assert sorted(result.runs) == [2, 3]
    y = result.outputs["Y"]
    np.testing.assert_array_equal(y[128:], np.tile(2 * x, (2, 1)))
    assert np.isnan(y[:128]).all()


def test_without_multicast_the_peer_half_never_lands():
    # each CTA loads only into itself: its barrier expects the whole tile, gets half
    run = _run(_kernel(mask="1 << r"), _x()).runs[0]
    assert isinstance(run, Deadlock), run
    assert any(b.barrier and b.barrier.endswith("full[0]") for b in run.blocked)


def test_cluster_rank_names_each_cta():
    y = _run(_kernel(rank_term="r"), _x()).outputs["Y"]
    offsets = (y - np.tile(2 * _x(), (4, 1)))[:, 0]
    assert list(offsets[::64]) == [0.0, 1.0, 0.0, 1.0]


def test_multicast_mask_outside_the_cluster_is_an_error():
    # a static mask is checked by the frontend (tests/frontend); a computed one here
    with pytest.raises(InterpretError, match=r"multicast mask 0b100 names CTAs outside"):
        _run(_kernel(mask="2 << r"), _x())


def test_grid_must_be_whole_clusters():
    kernel = compile_kernel(MULTICAST.replace("grid=(4,)", "grid=(3,)").replace(
        "MASK", "3").replace("RANKTERM", "0.0"))
    with pytest.raises(InterpretError, match="not a whole number of clusters"):
        _run(kernel, _x())


REMOTE = '''    if r == 0:
        with elect_one():
            arrive(done[0], cta=TARGET)
    else:
        wait(done[0], 0)
'''
LOCAL = '''    with elect_one():
        arrive(done[0], cta=1 - r)
    wait(done[0], 0)
'''


@pytest.mark.parametrize("target,completes", [("1", True), ("0", False)])
def test_remote_arrive_reaches_the_peers_barrier(target, completes):
    src = MULTICAST.replace("MASK", "3").replace("RANKTERM", "0.0")
    assert LOCAL in src
    kernel = compile_kernel(src.replace(LOCAL, REMOTE.replace("TARGET", target)))
    run = _run(kernel, _x()).runs[0]
    if completes:
        assert run.ok, run
    else:
        assert isinstance(run, Deadlock), run
        assert any(b.barrier == "cta1.done[0]" for b in run.blocked), run.blocked
