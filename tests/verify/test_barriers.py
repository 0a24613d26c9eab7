"""The barrier-participation pass (argus.verify.barriers): the corpus of examples/bugs/barriers
(each file names its check and line, and each deadlocks on the interpreter) and small
kernels for the cases the corpus does not reach: barriers shared by two roles, cluster
barriers, branches and loops on the warpgroup, elected barriers."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from argus.frontend.parse import parse_file, parse_source
from argus.interp.evaluator import interpret
from argus.verify import barriers
from argus.verify.driver import run as verify

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "examples" / "bugs" / "barriers").glob("*.py"))
EXPECTED = re.compile(r"Expected: (barriers\.[\w-]+) at line (\d+)")
sys.path.insert(0, str(ROOT / "tests" / "verify" / "protocol"))
from protocol_corpus import run_gemm  # noqa: E402


def _expected(path: Path) -> tuple[str, int]:
    m = EXPECTED.search(path.read_text())
    assert m, f"{path.name}: no 'Expected: barriers.<check> at line N' in its docstring"
    return m.group(1), int(m.group(2))


def test_the_corpus_is_there():
    assert len(CORPUS) >= 4


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_bug_is_reported_at_its_line(path):
    check, line = _expected(path)
    report = verify(parse_file(path)["gemm"])
    hits = [f for f in report.findings if f.check == check and f.loc.line == line]
    assert hits and hits[0].severity == "error", [str(f) for f in report.findings]
    assert hits[0].hint
    assert not report.ok


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_bug_deadlocks_on_the_interpreter(path):
    assert "Interpreter: deadlock" in path.read_text()
    result, right = run_gemm(parse_file(path)["gemm"], 128, 256, 128, seed=0)
    text = " ".join(result.failures())
    assert "deadlock" in text and ("bar.sync" in text), text
    assert not right


def test_the_corpus_base_is_clean():
    """The smem_tma epilogue the named-barrier bugs are copies of, with its barrier."""
    src = (ROOT / "examples" / "bugs" / "barriers" / "named_barrier_counts_block.py").read_text()
    src = src.replace("named_barrier(1, 384)", "named_barrier(1, 256)")
    kernel = parse_source(src, "base.py")["gemm"]
    assert barriers.check(kernel) == []
    result, right = run_gemm(kernel, 128, 256, 128, seed=0)
    assert result.ok and right, result.failures()


HEADER = "from argus.lang import *\n\n"


def _kernel(body: str):
    return parse_source(HEADER + body, "k.py")["k"]


def _findings(body: str):
    return [(f.check, f.loc.line - 2, f.severity) for f in barriers.check(_kernel(body))]


def _run(kernel):
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    return interpret(kernel, {"X": x, "Y": np.zeros((64, 64), np.float32)}, blocks=[0])


TWO_ROLES = '''
@kernel(grid=(1,), block=256)
def k(X: Tensor[64, 64, fp32], Y: Tensor[64, 64, fp32]):
    buf = smem(fp32, (64, 64))
    with role("writer", warpgroups=(0,), regs=40):
        store(buf[0], load(tile(X, (64, 64), (0, 0)), "blocked"))
        WRITER_SYNC
    with role("reader", warpgroups=(1,), regs=232):
        READER_SYNC
        store(tile(Y, (64, 64), (0, 0)), load(buf[0], "blocked") + 1.0)
'''


def _two_roles(writer: str, reader: str) -> str:
    return TWO_ROLES.replace("WRITER_SYNC", writer).replace("READER_SYNC", reader)


@pytest.mark.parametrize("sync", ["named_barrier(1, 256)", "sync_block()", "cluster_sync()"])
def test_a_barrier_every_role_reaches_is_clean_and_runs(sync):
    kernel = _kernel(_two_roles(sync, sync))
    assert barriers.check(kernel) == []
    result = _run(kernel)
    assert result.ok, result.failures()
    assert np.array_equal(result.outputs["Y"], np.arange(64 * 64).reshape(64, 64) + 1.0)


@pytest.mark.parametrize("sync,check", [("sync_block()", "barriers.participation"),
                                        ("cluster_sync()", "barriers.participation"),
                                        ("named_barrier(1, 256)", "barriers.count")])
def test_a_barrier_only_one_role_reaches_is_reported(sync, check):
    body = _two_roles(sync, "fence_proxy_async()")
    assert _findings(body) == [(check, 7, "error")]
    if sync != "cluster_sync()":          # the interpreter's cluster barrier counts agents
        assert "deadlock" in " ".join(_run(_kernel(body)).failures())


def test_two_roles_with_different_counts_on_one_id_clash():
    body = _two_roles("named_barrier(1, 256)", "named_barrier(1, 128)")
    found = barriers.check(_kernel(body))
    assert {f.check for f in found} == {"barriers.count"}
    assert any("128" in f.message and "256" in f.message for f in found)


def test_the_message_names_who_reaches_and_who_does_not():
    f, = barriers.check(_kernel(_two_roles("sync_block()", "fence_proxy_async()")))
    assert "warpgroup 0 of role writer" in f.message
    assert "not by warpgroup 1 of role reader" in f.message
    assert "deadlock" in f.message
    assert f.counterexample.warpgroup == 0


CONSUMERS = '''
@kernel(grid=("M // 64",), block=384)
def k(X: Tensor["M", 64, fp32], Y: Tensor["M", 64, fp32]):
    with role("producer", warpgroups=(0,), regs=40):
        fence_proxy_async()
    with role("consumers", warpgroups=(1, 2), regs=232):
        wg = warpgroup_index()
        bx = block_id("x")
        BODY
'''


@pytest.mark.parametrize("body,expected", [
    ("named_barrier(2, 256)", []),
    ("if bx > 0:\n            named_barrier(2, 256)", []),          # uniform branch
    ("if wg == 0:\n            named_barrier(2, 128)", []),          # one warpgroup, counted
    ("if wg == 0:\n            named_barrier(2, 256)", [("barriers.count", 10, "error")]),
    ("if wg + bx == 1:\n            named_barrier(2, 128)", []),     # one of the two, always
    ("if wg < bx:\n            named_barrier(2, 128)", [("barriers.count", 10, "error")]),
    ("for j in range(wg + 1):\n            named_barrier(2, 256)", [("barriers.count", 10, "error")]),
    ("for j in range(bx):\n            named_barrier(2, 256)", []),
    ("if wg == 1:\n            sync_block()", [("barriers.participation", 10, "error")]),
    ("named_barrier(2, 384)", [("barriers.count", 9, "error")]),
    ("with elect_one():\n            named_barrier(2, 256)", [("barriers.elected", 10, "error")]),
    ("with elect_one('warp'):\n            sync_block()", [("barriers.elected", 10, "error")]),
], ids=["whole-role", "uniform-branch", "branch-counted", "branch-short", "one-of-two",
        "wg-below-block", "wg-loop", "uniform-loop", "sync-block-branch", "over-count",
        "elected", "elected-warp"])
def test_which_warpgroups_reach_a_barrier(body, expected):
    assert _findings(CONSUMERS.replace("BODY", body)) == expected


def test_a_counterexample_names_the_sizes_that_split_the_warpgroups():
    f, = barriers.check(_kernel(CONSUMERS.replace(
        "BODY", "if wg < bx:\n            named_barrier(2, 128)")))
    # bx = 1: warpgroup_index 0 reaches it, 1 does not; bx >= 2: both (256 > 128)
    assert f.counterexample.sizes["M"] >= 64
    assert "128" in f.message


def test_library_and_examples_are_clean():
    paths = sorted((ROOT / "argus" / "kernels").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))
    for path in paths:
        for name, kernel in parse_file(path).items():
            assert barriers.check(kernel) == [], f"{path.name}::{name}"


PINGPONG = '''
@kernel(grid=(1,), block=384)
def k(X: Tensor[64, 64, fp32], Y: Tensor[64, 64, fp32]):
    with role("producer", warpgroups=(0,), regs=40):
        fence_proxy_async()
    with role("consumers", warpgroups=(1, 2), regs=232):
        wg = warpgroup_index()
        for j in range(3):
            FIRST
            fence_proxy_async()
            SECOND
        if wg == 0:
            store(tile(Y, (64, 64), (0, 0)), load(tile(X, (64, 64), (0, 0)), "blocked") + 1.0)
'''
TURN_0 = "if wg == 0:\n                named_barrier(3, 256)"
TURN_1 = "if wg == 1:\n                named_barrier(3, 256)"


@pytest.mark.parametrize("first,second,expected", [
    # warpgroup 0 waits before the op, 1 after it: they take turns, 256 arrivals a phase
    (TURN_0, TURN_1, []),
    # warpgroup 1 also syncs before the op: it arrives twice an iteration
    ("named_barrier(3, 256)", TURN_1, [("barriers.count", 12, "error")]),
    # warpgroup 1 never takes its turn: 128 arrivals, never 256
    (TURN_0, "fence_proxy_async()", [("barriers.count", 10, "error")]),
], ids=["ping-pong", "twice", "missing-turn"])
def test_two_warpgroups_taking_turns_at_one_barrier(first, second, expected):
    """A ping-pong (flash attention's consumers): each warpgroup of one role syncs on the
    barrier at its own point of the loop body; the arrivals of both add up to a phase."""
    body = PINGPONG.replace("FIRST", first).replace("SECOND", second)
    assert _findings(body) == expected
    result = interpret(_kernel(body), {"X": np.ones((64, 64), np.float32),
                                       "Y": np.zeros((64, 64), np.float32)}, blocks=[0])
    assert result.ok == (expected == []), result.failures()
    if expected:
        assert "deadlock" in " ".join(result.failures())
    if first == "named_barrier(3, 256)":
        f, = barriers.check(_kernel(body))
        assert "arrives twice" in f.message and "warpgroup 2" in f.message
