"""Ring steps of a loop whose trip count changes from tile to tile (protocol/model.py): a
causal attention tile visits its own number of key blocks, so on a persistent grid the
K/V ring's position of its first key block is the walked sum of the earlier tiles' counts.
The model numbers such a loop's steps by that same sum; any other count (the fixed-trip
formula i * nj, a sum of the wrong weight) is never verified."""

from pathlib import Path

import pytest

from argus.frontend import parse_source
from argus.ops.attention_configs import roles
from argus.verify import driver

SOURCE = (Path(__file__).resolve().parents[3] / "argus" / "kernels" / "attention.py").read_text()
WALKED = "        g0 = walked(nj)\n"
PERSISTENT_CAUSAL = {"HD": 64, "CAUSAL": 1, "PERSIST": 1, "BN": 128, "S": 3, "DEFER": 1,
                     **roles(2, 1)}


def check(source: str):
    assert WALKED in SOURCE
    kernel = parse_source(source, "attention.py", overrides=PERSISTENT_CAUSAL)["attention_bhsd"]
    return driver.run(kernel, 1)


def test_the_persistent_causal_walk_verifies():
    result = check(SOURCE)
    assert result.verdict == "verified", [str(f) for f in result.findings]


@pytest.mark.parametrize("wrong", [
    "        g0 = i * nj\n",             # the fixed-trip formula: tiles overlap in the ring
    "        g0 = walked(nj + 1)\n",     # a sum of the wrong weight: the ring skips steps
])
def test_a_ring_position_that_is_not_the_walked_trip_is_never_verified(wrong):
    result = check(SOURCE.replace(WALKED, wrong))
    assert result.verdict != "verified"
    said = " ".join(str(f) for f in result.findings)
    assert "protocol.stage" in said and "ring of 3 barriers" in said


def test_a_varying_trip_outside_a_schedule_body_leaves_the_steps_unnumbered():
    """Both roles number the ring i * nj + j over a plain loop of tiles whose key blocks
    differ (nj grows with the tile): the formula is wrong there, so it is not proved."""
    source = SOURCE.replace(WALKED, "        g0 = i * nj\n")
    plain = "for i in range((SQ + 64 * WGS - 1) // (64 * WGS)):\n"
    for role_indent in ("                ", "            "):
        source = source.replace(
            f"{role_indent}for i, c0, c1, c2 in schedule(e0, e1, e2):\n"
            f"{role_indent}    b, h, bx = walk_tile(c0, c1, c2)\n",
            f"{role_indent}{plain}{role_indent}    b, h, bx = 0, block_id(\"x\"), i\n")
    assert source.count(plain) == 2
    result = check(source)
    assert result.verdict != "verified"
    assert any("changes from one iteration" in str(f) for f in result.findings)
