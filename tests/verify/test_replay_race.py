"""Replay of a race's element (argus/verify/replay_race.py): a `tag.store-race` whose
writers do not both write the element it names is a defect of the verifier
(`verify.replay`), never the user's bug; a race both writers really make stays an error.

The false race is the one a lost product fact once produced on the library attention
(bshd): "L[2, 0] is written twice" by block (0, 2, 0) and block (0, 1, 0) at SQ = 1, where
each head's log-sum-exp has its own row of L. The point (sizes, blocks) is reachable, so
only the element replay tells it apart."""

from __future__ import annotations

from pathlib import Path

from argus.frontend.parse import parse_file
from argus.verify import replay, replay_race
from argus.verify.finding import Counterexample, ElementTag, Finding

REPO = Path(__file__).resolve().parents[2]
ATTENTION = REPO / "argus" / "kernels" / "attention.py"
SIZES = {"RQ": 1, "CQ": 192, "RK": 1, "CK": 192, "RL": 3, "SQ": 1, "SK": 1}


def bshd():
    return parse_file(ATTENTION)["attention_bshd"]


def lse_race(second_block_y: int, row: int = 2) -> Finding:
    """The race at the log-sum-exp store: block (0, 2, 0), warpgroup 1, against a second
    writer in block (0, second_block_y, 0)."""
    k = bshd()
    op = next(o for o in k.walk() if o.opcode == "store" and
              "lse" in [getattr(x, "name", "") for x in o.operands])
    other = {"thread": 128, "register": 0, "block_x": 0, "block_y": second_block_y,
             "block_z": 0, "warpgroup": 1}
    cex = Counterexample(block=(0, 2, 0), warpgroup=1, sizes=dict(SIZES), elements=(
        ElementTag("L", (row, 0), {"second writer": other}, {"writers": 1}),))
    return Finding("tag.store-race", "error", f"L[{row}, 0] is written twice", op.loc,
                   "store", "h", cex)


def test_a_race_whose_second_writer_writes_another_row_does_not_replay():
    f = lse_race(second_block_y=1)       # head 1 writes L[1], never L[2]
    why = replay.unreachable(bshd(), f)
    assert why is not None and "second writer" in why and "L[2, 0]" in why
    (out,) = replay.confirm(bshd(), [f])
    assert out.check == "verify.replay" and out.severity == "warning" and out.unproved
    assert "defect of the verifier" in out.message


def test_a_race_whose_first_writer_misses_the_element_does_not_replay():
    f = lse_race(second_block_y=2, row=1)   # block (0, 2, 0) writes L[2], not L[1]
    why = replay.unreachable(bshd(), f)
    assert why is not None and "first writer" in why


def test_an_element_both_writers_write_replays():
    # the same writer twice (a claim the element replay cannot refute): left as found
    f = lse_race(second_block_y=2)
    assert replay.unreachable(bshd(), f) is None
    assert replay.confirm(bshd(), [f]) == [f]


def test_the_writers_of_a_race_are_read_from_its_element():
    first, second, tensor, element = replay_race.writers(lse_race(1).counterexample)
    assert (tensor, element) == ("L", (2, 0))
    assert first.block == (0, 2, 0) and first.warpgroup == 1
    assert second.block == (0, 1, 0) and second.warpgroup == 1 and second.counters == {}
