"""barriers.lapped-wait (argus/verify/lapped.py): an mbarrier wait executed by every thread of
a role when only the elected thread acts on what it guards. The GEMM example's producer
written that way (the form every library kernel had until the H200 deadlock of moe_down at
64 experts) is reported at its wait, with a warp that does not hold the elected thread; the
forms that fixed it (the wait inside each step's elect_one, the whole loop inside one
elect_one) and every kernel of the library are clean. The interpreter moves the warps of a
role together, so this hang has no interpreter replay: the finding is structural."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.frontend.parse import parse_file, parse_source
from argus.verify import barriers
from argus.verify.driver import run as verify

ROOT = Path(__file__).resolve().parents[2]
GEMM = (ROOT / "examples" / "gemm.py").read_text()
START = '    with role("producer", warpgroups=(0,), regs=40):\n'
END = '    with role("consumer"'

HEAD = '''    with role("producer", warpgroups=(0,), regs=40):
        for i, tm, tn in schedule(M // BM, N // BN, order="grouped", group=8):
            for k in range(KT):
                g = i * KT + k
                s = g % S
'''
LOADS = '''expect_tx(full[s], nbytes(a_s[s]) + nbytes(b_s[s]))
tma_load(a_s[s], tile(A, (BM, BK), (tm, k)), full[s])
tma_load(b_s[s], tile(B, (BN, BK), (tn, k)), full[s])
'''
WAIT = "wait(empty[s], ((g // S) & 1) ^ 1)\n"


def _indent(text: str, n: int) -> str:
    return "".join(" " * n + line + "\n" for line in text.splitlines())


def _with_producer(body: str):
    start, end = GEMM.index(START), GEMM.index(END)
    src = GEMM[:start] + body + "\n" + GEMM[end:]
    return src, parse_source(src, "gemm_producer.py")["gemm"]


def _line_of(src: str, text: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


EVERY_THREAD_WAITS = HEAD + _indent(WAIT, 16) + "                with elect_one():\n" \
    + _indent(LOADS, 20)
WAIT_IN_EACH_STEP = HEAD + "                with elect_one():\n" + _indent(WAIT + LOADS, 20)


def test_every_thread_waiting_for_the_elected_threads_loads_is_reported():
    src, kernel = _with_producer(EVERY_THREAD_WAITS)
    found = [f for f in barriers.check(kernel) if f.check == "barriers.lapped-wait"]
    assert len(found) == 1, [str(f) for f in found]
    f = found[0]
    assert f.severity == "error" and f.hint and "elect_one" in f.hint
    assert f.loc.line == _line_of(src, "wait(empty[s]")
    assert "128 threads of role producer" in f.message
    # the lines it guards are the elected loads
    assert str(_line_of(src, "expect_tx(full[s]")) in f.message
    cex = f.counterexample
    assert cex.warpgroup == 0 and cex.warp == 1 and cex.thread == 32     # not the elected warp
    report = verify(kernel)
    assert not report.ok and report.verdict == "failed"


@pytest.mark.parametrize("body", [WAIT_IN_EACH_STEP], ids=["wait-in-each-step"])
def test_the_fixed_forms_are_clean(body):
    _, kernel = _with_producer(body)
    assert barriers.check(kernel) == []
    assert verify(kernel).ok


def test_the_example_as_shipped_is_clean():
    """The whole loop inside one elect_one (what every library producer does now)."""
    assert barriers.check(parse_source(GEMM, "gemm.py")["gemm"]) == []


def test_a_wait_followed_by_an_act_of_every_thread_is_not_lapped():
    # the waiting threads each arrive after the wait: the barrier's next phase waits for
    # all of them, so none can fall two phases behind
    body = HEAD + _indent(WAIT, 16) + "                with elect_one():\n" \
        + _indent(LOADS, 20) + _indent("arrive(full[s])", 16)
    _, kernel = _with_producer(body)
    assert [f for f in barriers.check(kernel) if f.check == "barriers.lapped-wait"] == []


def test_a_wait_in_a_loop_that_never_runs_is_not_reported():
    body = EVERY_THREAD_WAITS.replace("for k in range(KT):", "for k in range(0):")
    _, kernel = _with_producer(body)
    assert [f for f in barriers.check(kernel) if f.check == "barriers.lapped-wait"] == []


def test_library_kernels_have_no_lapped_wait():
    for path in sorted((ROOT / "argus" / "kernels").glob("*.py")):
        for name, kernel in parse_file(path).items():
            found = [f for f in barriers.check(kernel) if f.check == "barriers.lapped-wait"]
            assert found == [], f"{path.name}::{name}: {[str(f) for f in found]}"
