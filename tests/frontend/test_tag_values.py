"""tag_assert over the value of an index or predicate fragment (a mask, row_of/col_of):
it becomes value($i) in the predicate, prints and reads back; other fragments are refused
at their line with a hint."""

from argus.ir import format_kernel
from argus.ir import tagexpr as T
from argus.ir.reader import read_kernel


def _asserts(kernel):
    return [op for op in kernel.walk() if op.opcode == "tag.assert"]


def test_a_mask_in_a_tag_assert_stands_for_its_value(compile_body):
    kernel = compile_body("""
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        keep = col_of(s) <= row_of(s)
        tag_assert(keep == (tag(s).col <= tag(s).row))
    """)
    (op,) = _asserts(kernel)
    pred = op.attrs["pred"]
    assert isinstance(pred.lhs, T.ValueOf) and str(pred) == "(value($0) == (tag($1).col <= tag($1).row))"
    assert op.operands[0].type.dtype.name == "pred"
    assert T.operands_of(pred) == {0, 1}


def test_an_index_fragment_in_a_tag_assert(compile_body):
    kernel = compile_body("""
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        tag_assert(col_of(s) + 64 == tag(s).col + 64)
    """)
    (op,) = _asserts(kernel)
    assert str(op.attrs["pred"]) == "((value($0) + 64) == (tag($1).col + 64))"
    assert op.operands[0].type.dtype.name == "int32"


def test_value_predicates_round_trip_through_the_ir_text(compile_body):
    kernel = compile_body("""
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        keep = col_of(s) <= row_of(s)
        tag_assert(keep == (tag(s).col <= tag(s).row))
    """)
    text = format_kernel(kernel)
    again = read_kernel(text)
    (op,) = _asserts(again)
    assert op.attrs["pred"] == _asserts(kernel)[0].attrs["pred"]
    assert format_kernel(again) == text


def test_a_data_fragment_in_a_tag_assert_is_refused_at_its_line(dsl_error):
    err = dsl_error("""
        s = load(tile(C, (64, 64), (0, 0)), "wgmma_acc_m64n64")
        tag_assert(s == tag(s).row)
    """)
    assert err.body_line == 2 and "tag_assert cannot use 's' here" in err.message
    assert "predicate fragments" in err.hint
