"""Loops of arrivals (fanout.py), per-block arrival counts in a cluster (ring.py) and the
cluster-steps check (cluster.py), on the library GEMM with clusters of 2 and 4 blocks and
single edits of it; rings of every depth argus.ops gives (5, 9, 12 stages) decided."""

from __future__ import annotations

import pytest
import z3

from argus.frontend.parse import parse_source
from argus.ops.library import KERNEL_DIR
from argus.verify import protocol
from argus.verify.protocol import fanout
from argus.verify.protocol.model import build

SOURCE = (KERNEL_DIR / "gemm.py").read_text()
RELEASE = "arrive(empty[(g - 1) % S], cta=r)"


def kernel(name="gemm_nn", src=SOURCE, **overrides):
    return parse_source(src, "gemm.py", {"CM": 2, **overrides})[name]


def edited(old, new, name="gemm_nn", **overrides):
    assert old in SOURCE, old
    return kernel(name, SOURCE.replace(old, new), **overrides)


def errors(k):
    return [f for f in protocol.check(k) if f.severity == "error"]


@pytest.mark.parametrize("cm", [2, 4])
@pytest.mark.parametrize("name", ["gemm_nt", "gemm_nn"])
def test_cluster_gemm_has_no_protocol_finding(name, cm):
    assert protocol.check(kernel(name, CM=cm)) == []


def test_the_remote_arrive_loop_is_a_fanout_not_a_step():
    m = build(kernel())
    arrives = m.opcode("mbarrier.arrive")
    assert len(arrives) == 2 and all(len(e.where.fanout) == 1 for e in arrives)
    assert all(e.where.fanout[0].trip == 2 for e in arrives)
    wait = next(e for e in m.opcode("mbarrier.wait")
                if e.where.role.name == "consumer")
    in_loop = next(e for e in arrives if e.where.conds)
    # the release in the k loop runs at the consumer's step: same loops, no extra one
    assert in_loop.where.signature == wait.where.signature
    assert m.step(in_loop.where) is m.step(wait.where) or \
        z3.simplify(m.step(in_loop.where) == m.step(wait.where)).eq(z3.BoolVal(True))


def test_loops_that_wait_or_load_are_steps():
    m = build(kernel())
    for e in m.opcode("mbarrier.wait", "tma.load"):
        assert e.where.fanout == ()
    # the init loop (for s in range(S): mbarrier_init) is a loop, not a fan-out
    assert all(e.where.fanout == () for e in m.opcode("mbarrier.init"))


@pytest.mark.parametrize("cm,wg", [(2, 2), (2, 1), (4, 2)])
def test_every_block_receives_wg_times_cm_arrivals_per_step(cm, wg):
    m = build(kernel(CM=cm, WG=wg, CONSUMERS=(1,) if wg == 1 else (1, 2)))
    fill = next(e for e in m.opcode("mbarrier.arrive") if not e.where.conds)
    for r in range(cm):
        assert fanout.arrivals_at(m, fill, r) == wg * cm


def test_rotated_release_order_is_fine():
    k = edited(RELEASE, "arrive(empty[(g - 1) % S], cta=(rank + r) % CM)", CM=4)
    assert errors(k) == []


@pytest.mark.parametrize("old,new,block,got", [
    ("mbarrier_init(empty[s], WG * CM)", "mbarrier_init(empty[s], WG)", 0, 4),
    # every release of step g - 1 goes to block 0 (2 blocks x 2 ranks x 2 warpgroups);
    # K = 2 k-steps, step 0
    (RELEASE, "arrive(empty[(g - 1) % S], cta=0)", 0, 8),
    # the last rank is never released

    ("for r in range(CM):\n                                arrive",
     "for r in range(CM - 1):\n                                arrive", 1, 0),
])
def test_wrong_arrival_counts_name_the_block_and_the_step(old, new, block, got):
    src = SOURCE.replace(old, new)
    assert src != SOURCE
    (f,) = [f for f in errors(kernel(src=src)) if f.check == "protocol.arrival-count"]
    assert "arrive(empty[(g - 1) % S]" in src.splitlines()[f.loc.line - 1]
    assert f.counterexample.block == (block,) and f.counterexample.barrier is not None
    assert f"gets {got} arrivals" in f.message and f"block {block}" in f.message


def test_schedule_by_block_under_a_cluster_is_cluster_steps():
    src = SOURCE.replace('order="grouped", group=GROUP, by="cluster")',
                         'order="grouped", group=GROUP)')
    findings = [f for f in errors(kernel(src=src)) if f.check == "protocol.cluster-steps"]
    assert findings and "by=\"cluster\"" in findings[0].hint
    assert "schedule(" in src.splitlines()[findings[0].loc.line - 1]
    # a single block signals no peer: by="block" is fine there
    assert [f for f in protocol.check(kernel(src=src, CM=1))
            if f.check == "protocol.cluster-steps"] == []


def test_a_loop_bound_that_depends_on_the_rank_is_cluster_steps():
    k = edited("                for k in range(KT):\n                    g = i * KT + k\n"
               "                    s = g % S\n                    wait(empty[s]",
               "                for k in range(KT + rank):\n                    g = i * KT + k\n"
               "                    s = g % S\n                    wait(empty[s]")
    found = [f for f in errors(k) if f.check == "protocol.cluster-steps"]
    assert found and "depends on the block" in found[0].message


def test_exit_sync_is_reported_at_the_last_remote_signal():
    src = SOURCE.replace("    if CM > 1:\n        cluster_sync()     # no block leaves",
                         "    if CM > 2:\n        cluster_sync()     # no block leaves")
    (f,) = [f for f in errors(kernel(src=src)) if f.check == "protocol.cluster-exit-sync"]
    assert "cta=r" in src.splitlines()[f.loc.line - 1]
    assert "KT - 1" in src.splitlines()[f.loc.line - 1]     # the release after the loop


@pytest.mark.parametrize("stages", [5, 9, 12])
def test_rings_of_any_depth_are_decided(stages):
    """x % S of neighbouring steps for S not a power of two (the library's BN = 128 and
    64 rings): no solver timeout (protocol.stages / protocol.ring warnings), thanks to the
    modular lemmas every query gets (argus.verify.smt.mod_lemmas)."""
    k = kernel("gemm_nt", CM=1, WG=1, CONSUMERS=(1,), BN=128, ACC="wgmma_acc_m64n128",
               S=stages)
    assert protocol.check(k) == []


def test_the_init_sync_of_a_cluster_must_be_the_cluster_barrier():
    old = "        rank = cluster_rank()\n        cluster_sync()\n"
    assert old in SOURCE
    src = SOURCE.replace(old, "        rank = cluster_rank()\n        sync_block()\n")
    found = [f for f in errors(kernel(src=src)) if f.check == "protocol.mbarrier-init-sync"]
    assert found and "cluster_sync()" in found[0].message
