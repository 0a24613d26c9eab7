"""Tag assumptions and routing lookups in tag predicates (the MoE DSL surface):
`assume(tag(x).field == expr)` becomes a tag.assume op (a plain assume stays an assume),
`ids[coord(dst)[0]]` a Lookup of a 1-D int32 tensor; both print and read back; a lookup of
anything else is refused at its line with a hint; the interpreter runs past tag.assume."""

import numpy as np
import pytest

from argus.interp.evaluator import interpret
from argus.ir import format_kernel
from argus.ir import tagexpr as T
from argus.ir.check import problems
from argus.ir.reader import read_kernel

ROUTED = ('X: Tensor["T", "K", fp32], ids: Tensor["P", int32], counts: Tensor[8, int32], '
          'H: Tensor["P", "K", fp32]')


def _ops(kernel, opcode):
    return [op for op in kernel.walk() if op.opcode == opcode]


def test_a_tag_assumption_and_a_plain_assumption(compile_body):
    kernel = compile_body("""
        assume(K % 64 == 0)
        cnt = load_indices(tile(counts, (8,), (0,)))
        offs = prefix_sum(cnt)
        for e in range(8):
            assume(tag(segment(ids, element(offs, e), element(cnt, e))).expert == e)
        assume(tag(X).token == coord(X)[0] and tag(X).choice == 0)
        assume(ids[coord(ids)[0]] < T)
    """, params=ROUTED, block=128)
    assert len(_ops(kernel, "assume")) == 1
    first, whole, bound = _ops(kernel, "tag.assume")
    assert str(first.attrs["pred"]) == "(tag($0).expert == $1)"
    assert str(whole.attrs["pred"]) == "((tag($0).token == coord($0)[0]) and (tag($0).choice == 0))"
    assert isinstance(bound.attrs["pred"].lhs, T.Lookup)
    assert problems(kernel) == []
    text = format_kernel(kernel)
    assert format_kernel(read_kernel(text)) == text


def test_a_routing_lookup_in_a_tag_assert(compile_body):
    kernel = compile_body("""
        y = load(tile(H, (64, 64), (0, 0)), "blocked")
        dst = tile(H, (64, 64), (0, 0))
        tag_assert(tag(y).row == ids[coord(dst)[0] + 1])
    """, params=ROUTED, block=128)
    (op,) = _ops(kernel, "tag.assert")
    pred = op.attrs["pred"]
    assert isinstance(pred.rhs, T.Lookup) and str(pred.rhs) == "$1[(coord($2)[0] + 1)]"
    assert T.operands_of(pred) == {0, 1, 2}
    text = format_kernel(kernel)
    assert format_kernel(read_kernel(text)) == text


@pytest.mark.parametrize("bad, what", [("X[coord(dst)[0]]", "global<fp32>[T, K]"),
                                       ("H[0]", "global<fp32>[P, K]")])
def test_a_lookup_of_a_tensor_that_is_not_a_routing_array_is_refused(dsl_error, bad, what):
    err = dsl_error(f"""
        y = load(tile(H, (64, 64), (0, 0)), "blocked")
        dst = tile(H, (64, 64), (0, 0))
        tag_assert(tag(y).row == {bad})
    """, params=ROUTED, block=128)
    assert err.body_line == 3 and "1-D int32 routing array" in err.message
    assert what in err.message and "ids" in err.hint


def test_the_interpreter_runs_past_tag_assumptions(compile_body):
    kernel = compile_body("""
        assume(tag(X).token == coord(X)[0])
        y = load(tile(X, (64, 64), (0, 0)), "blocked")
        store(tile(H, (64, 64), (0, 0)), y)
    """, params=ROUTED, block=128)
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    result = interpret(kernel, {"X": x, "ids": np.zeros(64, np.int32),
                                "counts": np.zeros(8, np.int32),
                                "H": np.full((64, 64), np.nan, np.float32)})
    assert result.ok, result.failures()
    np.testing.assert_array_equal(result.outputs["H"], x)
