"""Bulk-store groups belong to the thread that committed them, and remote arrives name a
block of the cluster: the library GEMM's TMA-store epilogue on 2-block clusters (gemm_nn,
CM=2) with one guard or bound changed at a time. Each edit is a bug the interpreter shows
(a race on the epilogue buffer, a store in flight at exit, no write of C, a CTA outside
the cluster: benchmarks/mutation_report.py's gemm_nn_cluster target); the unmutated
kernel verifies clean."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from argus.frontend import parse_source
from argus.verify import verify

GEMM = Path(__file__).resolve().parents[3] / "argus" / "kernels" / "gemm.py"
CLUSTER = {"BLOCKS": 4, "CM": 2, "BN": 64, "ACC": "wgmma_acc_m64n64", "S": 3,
           "EPILOGUE": "smem_tma"}


def _nn_lines(source: str, text: str) -> list[int]:
    """1-based numbers of the lines of gemm_nn's consumer warpgroups (the helper `consumer`
    it inlines) that contain `text`, in order."""
    lines = source.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("def consumer("))
    return [i + 1 for i in range(start, len(lines)) if text in lines[i]]


def _edit(line: int, old: str, new: str) -> str:
    lines = GEMM.read_text().splitlines(keepends=True)
    assert old in lines[line - 1], (line, lines[line - 1])
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    return "".join(lines)


@lru_cache(maxsize=None)
def _errors(source: str) -> tuple:
    kernel = parse_source(source, str(GEMM), CLUSTER)["gemm_nn"]
    return tuple(f for f in verify(kernel) if f.severity == "error")


def _guard(which: int, new: str) -> str:
    """gemm_nn's `which`-th `if wg == 0:` (0: the wait before c_s is overwritten, 1: the
    TMA store, -1: the wait after the tile loop) rewritten as `new`."""
    line = _nn_lines(GEMM.read_text(), "if wg == 0:")[which]
    return _edit(line, "if wg == 0:", new)


def test_the_library_cluster_epilogue_verifies_clean():
    assert _errors(GEMM.read_text()) == ()


@pytest.mark.parametrize("guard", ["if wg == 1:", "if wg == -1:"])
def test_a_wait_in_another_warpgroup_does_not_retire_the_store(guard):
    errors = _errors(_guard(0, guard))
    reuse = [f for f in errors if f.check == "protocol.store-reuse"]
    assert reuse, [f.check for f in errors]
    assert "tma_store_wait(0)" in reuse[0].hint and "issued" in reuse[0].hint


def test_a_store_issued_by_the_other_warpgroup_is_never_retired():
    checks = {f.check for f in _errors(_guard(1, "if wg == 1:"))}
    assert {"protocol.store-reuse", "protocol.store-unretired"} <= checks


@pytest.mark.parametrize("guard", ["if wg == 1:", "if wg == -1:"])
def test_the_last_store_must_be_waited_for_by_its_issuer(guard):
    errors = _errors(_guard(-1, guard))
    assert [f.check for f in errors] == ["protocol.store-unretired"]
    f = errors[0]
    store_line = _nn_lines(GEMM.read_text(), "tma_store(tile(C")[0]
    assert f.loc.line == store_line and "in flight when the block exits" in f.message


def test_a_store_no_warpgroup_runs_leaves_c_unwritten():
    errors = _errors(_guard(1, "if wg == -1:"))
    cover = [f for f in errors if f.check == "tag.store-coverage"]
    assert cover and cover[0].message.startswith("C is never written"), \
        [(f.check, f.message) for f in errors]


@pytest.mark.parametrize("which", [0, 1])
def test_a_remote_arrive_outside_the_cluster_is_an_error(which):
    line = _nn_lines(GEMM.read_text(), "for r in range(CM):")[which]
    errors = _errors(_edit(line, "range(CM)", "range(CM + 1)"))
    rank = [f for f in errors if f.check == "protocol.cluster-rank"]
    assert rank, [f.check for f in errors]
    assert rank[0].loc.line == line + 1
    assert "block 2 of the cluster" in rank[0].message and "r = 2" in rank[0].message
    assert "0..1" in rank[0].hint


def test_a_rank_within_the_cluster_is_not_reported():
    line = _nn_lines(GEMM.read_text(), "for r in range(CM):")[0]
    # both blocks of the cluster, in the other order: nothing to report
    errors = _errors(_edit(line + 1, "cta=r", "cta=(r + 1) % CM"))
    assert not [f for f in errors if f.check == "protocol.cluster-rank"]
