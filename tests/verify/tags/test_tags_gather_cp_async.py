"""The tag pass models gather_cp_async's stage exactly as gather_tma's (tags/gather.py): the
gate-up with either gather verifies, and the same mistakes in the rows or the column tile
gathered give the same findings at the same lines in both forms."""

from __future__ import annotations

import pytest

from argus.frontend.parse import parse_source
from argus.ops.library import KERNEL_DIR
from argus.verify.tags import check

SOURCE = (KERNEL_DIR / "moe_gate_up.py").read_text()


def _kernel(gather: str, old: str = "", new: str = ""):
    src = SOURCE.replace('GATHER = "tma"', f'GATHER = "{gather}"')
    assert old in src
    return parse_source(src.replace(old, new), "moe_gate_up_variant.py")["moe_gate_up"]


def _findings(kernel):
    return sorted((f.check, f.loc.line) for f in check(kernel) if f.severity == "error")


@pytest.mark.parametrize("gather", ["tma", "warpgroup"])
def test_both_gathers_verify(gather):
    assert _findings(_kernel(gather)) == []


OP = {"tma": "gather_tma", "warpgroup": "gather_cp_async"}


@pytest.mark.parametrize("old, new, expect", [
    # the tokens of the next m-tile: rows of other slots (the stored row is not its token's)
    ("tokens = load_indices(tile(ids_e, (BM,), (mt,)))",
     "tokens = load_indices(tile(ids_e, (BM,), (mt + 1,)))", "tag.assert"),
    # the first column tile at every k-step: A's k slice is not B's
    ("{op}(x_s[s], X, tokens, k, full[s])", "{op}(x_s[s], X, tokens, 0, full[s])",
     "tag.wgmma-k"),
])
def test_the_same_mistake_gives_the_same_findings_in_both_forms(old, new, expect):
    found = {g: _findings(_kernel(g, old.format(op=OP[g]), new.format(op=OP[g])))
             for g in OP}
    assert expect in {c for c, _ in found["tma"]}, found
    assert found["warpgroup"] == found["tma"], found
