"""The tag pass on clusters (cluster.py) and on stages filled by several loads (bands.py):
the rank, the cluster walk, multicast bands composed per issuing block, the exactly-once
fill of a stage, and the rank in store identities, on the library GEMM with clusters of
2, 4 and 8 blocks and single edits of it."""

from __future__ import annotations

import pytest

from argus.frontend.parse import parse_source
from argus.ops.library import KERNEL_DIR
from argus.verify.tags import check
from argus.verify.tags.walker import Walker

SOURCE = (KERNEL_DIR / "gemm.py").read_text()
NN_BAND = "tma_load(tile(b_s[s], (BK // CM, BN), (rank, 0))"
NT_BAND = "tma_load(tile(b_s[s], (BN // CM, BK), (rank, 0))"
NN_SOURCE = "tile(B, (BK // CM, BN), (k * CM + rank, tn))"
MASK = "multicast=(1 << CM) - 1)"


def kernel(name="gemm_nn", src=SOURCE, **overrides):
    return parse_source(src, "gemm.py", {"CM": 2, **overrides})[name]


def edited(old, new, name="gemm_nn", **overrides):
    assert old in SOURCE, old
    return kernel(name, SOURCE.replace(old, new), **overrides)


def errors(findings):
    return [f for f in findings if f.severity == "error"]


def text_at(src, f):
    return src.splitlines()[f.loc.line - 1]


@pytest.mark.parametrize("cm,blocks", [(2, 132), (4, 132), (8, 128)])
@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
def test_cluster_gemm_verifies_clean(name, cm, blocks):
    assert check(kernel(name, CM=cm, BLOCKS=blocks)) == []


def test_the_rank_is_a_bounded_variable_and_the_schedule_walks_clusters():
    w = Walker(kernel(CM=4))
    w.run()
    assert "rank" in w.ctx.vars and w.ctx.vars["rank"].kind == "block"
    (info, *_), = [list(w.schedules.values())]
    assert info.walker == "cluster" and info.blocks == 33      # 132 blocks / 4
    assert "block" not in w.ctx.vars                           # no per-block walk


def test_a_single_block_kernel_has_no_rank_variable():
    w = Walker(kernel(CM=1))
    w.run()
    assert "rank" not in w.ctx.vars and "cluster" not in w.ctx.vars


def test_mask_missing_a_block_leaves_its_stage_unfilled():
    src = SOURCE.replace(MASK, "multicast=(1 << CM) - 2)")      # every block but rank 0
    (f, *_) = [f for f in errors(check(kernel(src=src, CM=4))) if f.check == "tag.stage-fill"]
    assert f.counterexample.iteration["rank"] == 0
    assert "which no TMA load of this step writes" in f.message
    assert "tma_load(tile(b_s[s]" in text_at(src, f)
    assert f.counterexample.elements[0].actual["writers"] == 0


def test_two_blocks_in_one_band_write_it_twice():
    src = SOURCE.replace(NN_BAND, "tma_load(tile(b_s[s], (BK // CM, BN), (rank // 2, 0))")
    found = [f for f in errors(check(kernel(src=src, CM=4))) if f.check == "tag.stage-fill"]
    assert found
    f = found[0]
    writers = f.counterexample.elements[0].actual["writers"]
    assert writers in (0, 2)
    if writers == 2:
        ranks = f.counterexample.elements[0].actual["written by ranks"]
        assert len(ranks) == 2 and ranks[0] // 2 == ranks[1] // 2
        assert "is written by 2 TMA loads" in f.message


@pytest.mark.parametrize("band", ["(rank + 1) % CM", "CM - 1 - rank"])
def test_a_band_in_the_wrong_place_meets_the_wrong_k_slice(band):
    k = edited(NN_BAND, f"tma_load(tile(b_s[s], (BK // CM, BN), ({band}, 0))", CM=4)
    (f, *_) = errors(check(k))
    assert f.check == "tag.wgmma-k"
    cex = f.counterexample
    assert "rank" in cex.iteration and cex.block is not None
    (e,) = cex.elements
    assert e.actual["a.k"] != e.actual["b.k"]


def test_the_block_of_a_counterexample_is_its_clusters_block():
    k = edited(NN_SOURCE, "tile(B, (BK // CM, BN), (k + rank, tn))")
    (f, *_) = errors(check(k))
    cex = f.counterexample
    it = cex.iteration
    assert cex.block == (it["cluster"] * 2 + it["rank"],)


def test_tm_without_the_cluster_stride_is_a_race_and_a_hole():
    src = SOURCE.replace("tm = cm * CM + rank", "tm = cm + rank")
    findings = errors(check(kernel(src=src)))
    race = next(f for f in findings if f.check == "tag.store-race")
    other = race.counterexample.elements[0].actual["second writer"]
    assert other["rank"] != race.counterexample.iteration["rank"]
    hole = next(f for f in findings if f.check == "tag.store-coverage")
    assert hole.counterexample.elements[0].actual == {"writers": 0}


def test_a_block_tile_that_ignores_the_rank_is_a_race():
    src = SOURCE.replace("tm = cm * CM + rank", "tm = cm * CM")
    race = next(f for f in errors(check(kernel(src=src))) if f.check == "tag.store-race")
    other = race.counterexample.elements[0].actual["second writer"]
    assert other["rank"] != race.counterexample.iteration["rank"]
    assert other["cm"] == race.counterexample.iteration["cm"]


def test_a_whole_stage_loaded_in_two_bands_by_one_block_verifies():
    """Several loads into one stage, no cluster: the bands compose."""
    old = "tma_load(b_s[s], tile(B, (BN, BK), (tn, k)), full[s])"
    new = ("tma_load(tile(b_s[s], (BN // 2, BK), (0, 0)), tile(B, (BN // 2, BK), "
           "(tn * 2, k)), full[s])\n                        tma_load(tile(b_s[s], (BN // 2, "
           "BK), (1, 0)), tile(B, (BN // 2, BK), (tn * 2 + 1, k)), full[s])")
    assert old in SOURCE
    src = SOURCE.replace(old, new)
    assert check(kernel("gemm_nt", src, CM=1)) == []
    swapped = src.replace("(tn * 2 + 1, k)", "(tn * 2, k)", 1)
    assert any(f.check in ("tag.assert", "tag.wgmma-col", "tag.k-coverage")
               for f in errors(check(kernel("gemm_nt", swapped, CM=1))))


def test_schedule_by_block_in_a_cluster_takes_the_peers_tile():
    src = SOURCE.replace('order="grouped", group=GROUP, by="cluster")',
                         'order="grouped", group=GROUP)')
    findings = check(kernel(src=src))
    (f, *_) = errors(findings)
    assert f.check == "tag.wgmma-col"
    # the rank of a block walk is the block's position in its cluster, not an identity
    w = Walker(kernel(src=src))
    w.run()
    assert "rank" not in w.ctx.vars and "block" in w.ctx.vars
    # coverage of C is not claimed for a store whose rows depend on the block's rank
    assert any(f.check == "tag.store-coverage" and f.severity == "warning" for f in findings)


def test_one_block_multicasting_the_whole_tile_verifies_and_two_write_it_twice():
    """Another way to share B: rank 0 loads the whole tile into both blocks. The stage of
    either block is filled once; if every block does it, twice (and the bytes double)."""
    from argus.verify import verify
    old = ("tma_load(tile(b_s[s], (BK // CM, BN), (rank, 0)), tile(B, (BK // CM, BN), "
           "(k * CM + rank, tn)), full[s],\n                                 "
           "multicast=(1 << CM) - 1)")
    new = ("if rank == 0:\n                            tma_load(b_s[s], tile(B, (BK, BN), "
           "(k, tn)), full[s], multicast=(1 << CM) - 1)")
    assert old in SOURCE
    src = SOURCE.replace(old, new)
    assert verify(kernel(src=src)) == []
    both = src.replace("if rank == 0:", "if rank < CM:")
    findings = errors(verify(kernel(src=both)))
    fill = next(f for f in findings if f.check == "tag.stage-fill")
    assert fill.counterexample.elements[0].actual["written by ranks"] == [0, 1]
    assert any(f.check == "protocol.expect-tx" for f in findings)
