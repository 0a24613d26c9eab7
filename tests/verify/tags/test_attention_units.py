"""The attention rules of the tag pass on small kernels and on the layout tables: row
reductions (the quad partner set, the tags they keep), layout conversions (thread-local
only), index and predicate fragments (signed, specified masks)."""

from __future__ import annotations

import pytest

from argus.frontend.parse import parse_source
from argus.verify.tags import check
from argus.verify.tags.convert import thread_gap
from argus.verify.tags.reductions import partner_gap

HEADER = '''from argus.lang import *


@kernel(grid=(1,), block=128)
def k(C: Tensor[64, 64, fp32], D: Tensor[64, 64, bf16]):
'''


def kernel(body: str):
    lines = [l for l in body.strip("\n").splitlines()]
    indent = len(lines[0]) - len(lines[0].lstrip())
    src = HEADER + "\n".join("    " + l[indent:] for l in lines) + "\n"
    return src, parse_source(src, "k.py")["k"]


def line_of(src: str, text: str) -> int:
    return next(i + 1 for i, l in enumerate(src.splitlines()) if text in l)


# -- row reductions ------------------------------------------------------------------------
@pytest.mark.parametrize("layout,shape", [("wgmma_acc_m64n64", (64, 64)),
                                          ("wgmma_acc_m64n128", (64, 128)),
                                          ("wgmma_acc_m64n256", (64, 256)),
                                          ("wgmma_a_rs_16bit", (64, 64))])
@pytest.mark.parametrize("kind", ["max", "sum"])
def test_the_quad_butterfly_combines_each_row_exactly(layout, shape, kind):
    assert partner_gap(layout, shape, kind) is None


def test_a_butterfly_over_too_few_lanes_misses_columns():
    what, thread, row, col = partner_gap("wgmma_acc_m64n64", (64, 64), "max", (1,))
    assert (what, thread, row) == ("misses", 0, 0) and col == 4   # lanes 2, 3 hold it


def test_a_butterfly_over_too_many_lanes_mixes_rows():
    what, thread, row, partner, theirs = partner_gap("wgmma_acc_m64n64", (64, 64), "max",
                                                     (1, 2, 4))
    assert (what, thread, row, partner, theirs) == ("mixes", 0, 0, 4, 1)


def test_a_layout_that_is_no_atom_tiling_is_not_claimed():
    assert partner_gap("blocked", (64, 64), "sum") == "layout"


def test_a_row_reduction_keeps_the_row_and_the_iteration_and_drops_the_column():
    src, k = kernel('''
        s = add_tag(load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64"), iteration=3)
        m = row_max(s)
        tag_assert(tag(m).row == tag(s).row and tag(m).iteration == 3)
        tag_assert(tag(m).col == 0)
    ''')
    findings = check(k)
    assert [(f.check, f.loc.line) for f in findings] == [
        ("tag.assert-undischarged", line_of(src, "tag(m).col == 0"))]
    assert "no field 'col'" in findings[0].message


def test_a_row_reduction_of_a_blocked_tile_keeps_the_row():
    """Plain (blocked) tiles are the MoE router's (vectors.py): a row reduction keeps the
    fields that do not depend on the column, and a wrong claim about them is refuted."""
    src, k = kernel('''
        s = load(tile(C, (64, 64), (0, 0)), "blocked")
        m = row_sum(s)
        tag_assert(tag(m).row == tag(s).row)
    ''')
    assert check(k) == []
    src, k = kernel('''
        s = load(tile(C, (64, 64), (0, 0)), "blocked")
        m = row_sum(s)
        tag_assert(tag(m).row == tag(s).row + 1)
    ''')
    (f,) = check(k)
    assert f.check == "tag.assert" and f.loc.line == line_of(src, "tag_assert(tag(m).row")


def test_a_wrong_row_statistic_is_refuted_with_the_thread_that_holds_the_row():
    src, k = kernel('''
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        m = row_max(s)
        tag_assert(tag(m).row == tag(s).row + 1)
    ''')
    (f,) = check(k)
    assert f.check == "tag.assert" and f.counterexample.thread is not None
    assert f.counterexample.layout == "wgmma_acc_m64n64"


# -- layout conversions --------------------------------------------------------------------
@pytest.mark.parametrize("src,dst,shape", [("wgmma_acc_m64n64", "wgmma_a_rs_16bit", (64, 64)),
                                           ("wgmma_acc_m64n128", "wgmma_a_rs_16bit", (64, 128)),
                                           ("wgmma_a_rs_16bit", "wgmma_acc_m64n64", (64, 64))])
def test_accumulator_and_16bit_register_operand_agree_thread_by_thread(src, dst, shape):
    assert thread_gap(src, dst, shape) is None


def test_the_8bit_register_operand_needs_other_threads_data():
    thread, element, owners = thread_gap("wgmma_acc_m64n64", "wgmma_a_rs_8bit", (64, 64))
    assert thread not in owners and owners


def test_a_conversion_across_threads_is_an_error_naming_the_thread():
    src, k = kernel('''
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        p = convert_layout(s, "ldmatrix_x4")
    ''')
    (f,) = [f for f in check(k) if f.severity == "error"]
    assert f.check == "tag.convert" and f.loc.line == line_of(src, "convert_layout")
    cex = f.counterexample
    (e,) = cex.elements
    assert cex.thread is not None and cex.thread not in e.actual["held by threads"]


def test_a_thread_local_conversion_keeps_the_tags():
    src, k = kernel('''
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        p = convert_layout(cast(s, bf16), "wgmma_a_rs_16bit")
        tag_assert(tag(p).row == coord(p)[0] and tag(p).col == coord(p)[1])
    ''')
    assert check(k) == []


# -- index and predicate fragments ---------------------------------------------------------
def test_index_arithmetic_is_signed_like_the_int32_code():
    """row - col >= 0 is the causal mask (unsigned, it would hold everywhere)."""
    src, k = kernel('''
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        keep = row_of(s) - col_of(s) >= 0
        tag_assert(keep == (tag(s).col <= tag(s).row))
    ''')
    assert check(k) == []


def test_a_mask_that_is_not_its_specification_is_refuted_at_an_element():
    src, k = kernel('''
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        keep = col_of(s) < row_of(s)
        tag_assert(keep == (tag(s).col <= tag(s).row))
    ''')
    (f,) = check(k)
    assert f.check == "tag.assert" and f.loc.line == line_of(src, "tag_assert(keep")
    (e,) = f.counterexample.elements
    assert e.actual["tag.col"] == e.actual["tag.row"] and e.expected["value[0]"] == 0


def test_a_select_that_is_not_a_mask_is_not_modelled():
    src, k = kernel('''
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        z = select(col_of(s) <= row_of(s), s, 0.0)
        tag_assert(tag(z).row == coord(z)[0])
    ''')
    checks = {f.check for f in check(k)}
    assert "tag.not-modelled" in checks and "tag.assert-undischarged" in checks


def test_a_reduction_across_rows_loses_the_row_and_is_an_error(monkeypatch):
    """A tile whose row tag varies along its rows (as a transposed load would give: no op
    of today's DSL does) reduced row by row: the result has no row, at the reduction."""
    from argus.verify.tags import memory, rules

    def transposed_load(w, op):
        memory.load(w, op)
        frag = w.env[op.result]
        frag.tag.fields["row"], frag.tag.fields["col"] = (frag.tag.fields["col"],
                                                          frag.tag.fields["row"])

    monkeypatch.setitem(rules.RULES, "load", transposed_load)
    src, k = kernel('''
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        m = row_max(s)
    ''')
    (f,) = check(k)
    assert f.check == "tag.reduction" and f.loc.line == line_of(src, "m = row_max(s)")
    assert "wrong axis" in f.message and f.counterexample.thread is not None
