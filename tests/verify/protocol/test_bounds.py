"""Barrier and stage indices in range, every used barrier initialised, each init on one
thread (protocol/bounds.py; the gaps the mutation sweep found, docs/mutation-report.md)."""

import pytest

from argus.frontend import parse_source
from argus.ops.library import KERNEL_DIR
from argus.verify import verify

SOURCE = (KERNEL_DIR / "gemm.py").read_text()
INIT = '''    with elect_one("block"):
        for s in range(S):
            mbarrier_init(full[s], 1)
            mbarrier_init(empty[s], WG * CM)'''

MUTANTS = {
    "buffer with a stage too few": (
        'a_s = smem(DT, (BM, BK), stages=S, swizzle="128B")',
        'a_s = smem(DT, (BM, BK), stages=S - 1, swizzle="128B")',
        "protocol.index-bounds", "outside its 3 stages", "tma_load(a_s[s]"),
    "barriers initialised by every thread": (
        INIT, "\n".join(l[4:] for l in INIT.splitlines()[1:]),
        "protocol.init-once", "runs on 384 threads", "mbarrier_init(full[s], 1)"),
    "one barrier never initialised": (
        INIT, INIT.replace("range(S)", "range(S - 1)"),
        "protocol.init-coverage", "full[3] is never initialised", "mbarrier_init(full[s], 1)"),
    "one barrier skipped by a condition in the init loop": (
        INIT, INIT.replace("            mbarrier_init(full[s], 1)",
                           "            if s != 2:\n                mbarrier_init(full[s], 1)"),
        "protocol.init-coverage", "full[2] is never initialised", "mbarrier_init(full[s], 1)"),
    "A sub-tile left of its stage": (
        "wgmma(acc, tile(a_s[s], (64, BK), (wg, 0)), b_s[s])",
        "wgmma(acc, tile(a_s[s], (64, BK), (wg, 0 - 1)), b_s[s])",
        "protocol.index-bounds", "starts at -64 on axis 1", "wgmma(acc, tile(a_s[s]"),
    "init past the array": (
        INIT, INIT.replace("range(S)", "range(S + 1)"),
        "protocol.index-bounds", "full[4] is outside the array of 4", "mbarrier_init(full[s], 1)"),
}


def test_correct_kernels_have_none_of_these_findings():
    for name in ("gemm_nt", "gemm_nn"):
        checks = {f.check for f in verify(parse_source(SOURCE, "gemm.py")[name])}
        assert not checks & {"protocol.index-bounds", "protocol.init-coverage",
                             "protocol.init-once"}


def test_a_spare_barrier_past_the_ring_is_not_an_error():
    # the ring is g % S over an array of S + 1: the last barrier is never used (the ring's
    # size is the modulus, not the array's length; the mutation sweep's false alarm)
    for array in ("full", "empty"):
        src = SOURCE.replace(f"    {array} = mbarrier(S)\n", f"    {array} = mbarrier(S + 1)\n", 1)
        assert src != SOURCE
        errors = [f for f in verify(parse_source(src, "spare.py")["gemm_nt"])
                  if f.severity == "error"]
        assert errors == []


@pytest.mark.parametrize("bug", MUTANTS)
def test_bug_reported_at_its_line(bug):
    old, new, check, words, marker = MUTANTS[bug]
    assert old in SOURCE
    src = SOURCE.replace(old, new, 1)
    found = [f for f in verify(parse_source(src, "bug.py")["gemm_nt"]) if f.check == check]
    assert found, bug
    assert words in found[0].message
    line = next(i + 1 for i, l in enumerate(src.splitlines()) if marker in l)
    assert found[0].loc.line == line
