"""Interpreter semantics of the scan family: exclusive prefix sums (index vectors exactly,
1-D fragments in fp32 rounded to their dtype), element(), round_up(), and row segments
(tiles relative to the segment's start, zeros read past its end, stores masked there)."""

from __future__ import annotations

import numpy as np
import pytest

from argus.frontend.parse import parse_source
from argus.interp.errors import InterpretError
from argus.interp.evaluator import interpret
from argus.interp.machine import round_to_bf16
from argus.interp.ops import RULES

FILE = "scan_kernel.py"


def compile_kernel(body: str):
    return parse_source("from argus.lang import *\n\n" + body, FILE)["k"]


def run_rule(kernel, opcode, *args):
    """Run the interpreter rule of the first `opcode` op of `kernel` on `args`."""
    op = next(op for op in kernel.walk() if op.opcode == opcode)
    gen = RULES[opcode](None, op, list(args))
    with pytest.raises(StopIteration) as done:
        next(gen)
    return done.value.value


VECTORS = '''
@kernel(grid=(1,), block=128)
def k(C: Tensor[4, int32]):
    cnt = load_indices(tile(C, (4,), (0,)))
    offs = prefix_sum(round_up(cnt, 128))
    first = element(offs, 2)
'''


def test_prefix_sum_of_an_index_vector_is_exclusive_and_exact():
    k = compile_kernel(VECTORS)
    out = run_rule(k, "scan.prefix_sum", np.array([3, 0, 5, 2, 2 ** 40], np.int64))
    assert out.tolist() == [0, 3, 3, 8, 10]
    assert run_rule(k, "scan.prefix_sum", np.array([7], np.int64)).tolist() == [0]


def test_round_up_pads_each_count_to_the_multiple():
    k = compile_kernel(VECTORS)
    out = run_rule(k, "indices.round_up", np.array([0, 1, 127, 128, 129, 300], np.int64))
    assert out.tolist() == [0, 128, 128, 128, 256, 384]


def test_element_reads_one_entry_as_a_scalar():
    k = compile_kernel(VECTORS)
    got = run_rule(k, "indices.element", np.array([5, 6, 7, 8], np.int64), 2)
    assert got == 7 and isinstance(got, int)
    with pytest.raises(InterpretError, match=rf"{FILE}:8:13: element 4 .* 4 entries"):
        run_rule(k, "indices.element", np.array([5, 6, 7, 8], np.int64), 4)


FRAGMENTS = '''
@kernel(grid=(1,), block=128)
def k(F: Tensor[64, fp32], G: Tensor[64, fp32], B: Tensor[64, bf16], H: Tensor[64, bf16],
      I: Tensor[64, int32], J: Tensor[64, int32]):
    store(tile(G, (64,), (0,)), prefix_sum(load(tile(F, (64,), (0,)), "blocked")))
    store(tile(H, (64,), (0,)), prefix_sum(load(tile(B, (64,), (0,)), "blocked")))
    store(tile(J, (64,), (0,)), prefix_sum(load(tile(I, (64,), (0,)), "blocked")))
'''


@pytest.mark.parametrize("mode", ["value", "exact"])
@pytest.mark.parametrize("seed", [0, 1])
def test_prefix_sum_of_fragments_sums_in_fp32_and_rounds_to_the_dtype(seed, mode):
    rng = np.random.default_rng(seed)
    f = rng.standard_normal(64).astype(np.float32)
    b = round_to_bf16(rng.standard_normal(64).astype(np.float32) * 8)
    i = rng.integers(-1000, 1000, 64).astype(np.int32)
    nan = np.full(64, np.nan, np.float32)
    out = interpret(compile_kernel(FRAGMENTS), {"F": f, "G": nan, "B": b, "H": nan.copy(),
                                                "I": i, "J": np.zeros(64, np.int32)}, seed=seed,
                    mode=mode)
    assert out.ok, out.failures()

    def exclusive(x):
        return np.concatenate([[0], np.cumsum(x[:-1], dtype=np.float32)]).astype(np.float32)

    np.testing.assert_array_equal(out.outputs["G"], exclusive(f))
    np.testing.assert_array_equal(out.outputs["H"], round_to_bf16(exclusive(b)))
    assert not np.array_equal(out.outputs["H"], exclusive(b))   # it did round
    np.testing.assert_array_equal(out.outputs["J"], np.concatenate([[0], np.cumsum(i[:-1])]))


# Groups of X rows (offsets on the device) copied into a padded layout P (group e at rows
# 16e..16e+15, zeros past its count), then back from P into Z through segments, groups in
# reverse so a store leaking past its segment would clobber the group after it.
GROUPS = '''
@kernel(grid=(1,), block=128)
def k(X: Tensor["T", 8, fp32], C: Tensor[4, int32], P: Tensor[64, 8, fp32],
      Z: Tensor["T", 8, fp32]):
    cnt = load_indices(tile(C, (4,), (0,)))
    offs = prefix_sum(cnt)
    for e in range(4):
        x = load(tile(segment(X, element(offs, e), element(cnt, e)), (16, 8), (0, 0)), "blocked")
        store(tile(P, (16, 8), (e, 0)), x)
    for r in range(4):
        e = 3 - r
        p = load(tile(P, (16, 8), (e, 0)), "blocked")
        store(tile(segment(Z, element(offs, e), element(cnt, e)), (16, 8), (0, 0)), p * 2.0)
'''


def _groups(counts, t):
    rng = np.random.default_rng(sum(counts))
    x = rng.standard_normal((t, 8)).astype(np.float32)
    inputs = {"X": x, "C": np.array(counts, np.int32),
              "P": np.full((64, 8), np.nan, np.float32), "Z": np.full((t, 8), np.nan, np.float32)}
    return x, inputs


@pytest.mark.parametrize("mode", ["value", "exact"])
@pytest.mark.parametrize("counts", [[5, 0, 16, 3], [0, 0, 0, 9], [16, 16, 16, 16]])
def test_segments_start_at_the_offsets_read_zeros_past_the_end_and_mask_stores(counts, mode):
    t = sum(counts) + 6                          # six rows routed to no group
    x, inputs = _groups(counts, t)
    out = interpret(compile_kernel(GROUPS), inputs, seed=2, mode=mode)
    assert out.ok, out.failures()
    p, z = out.outputs["P"], out.outputs["Z"]
    offs = np.concatenate([[0], np.cumsum(counts)])
    for e, c in enumerate(counts):
        np.testing.assert_array_equal(p[16 * e:16 * e + c], x[offs[e]:offs[e] + c])
        assert (p[16 * e + c:16 * (e + 1)] == 0).all()        # read past the end: zeros
    np.testing.assert_array_equal(z[:offs[-1]], 2 * x[:offs[-1]])   # no group clobbered
    assert np.isnan(z[offs[-1]:]).all()                             # nothing past the last


def test_segment_outside_its_tensor_is_an_error_naming_the_rows():
    x, inputs = _groups([5, 0, 16, 3], 20)        # group 2 needs rows 5..20
    with pytest.raises(InterpretError, match=rf"{FILE}:\d+:\d+: segment rows \[5, 21\) of "
                                             r"X, which has 20 rows.*add up"):
        interpret(compile_kernel(GROUPS), inputs)


def test_exact_mode_prefix_sum_stays_in_the_fragments_registers():
    """In exact mode the scan's result is registers dealt out through the result's layout
    (thread t, register v), not a bare logical vector."""
    from argus.interp.exact.fraglayout import layout_of
    from argus.interp.exact.regs import Regs
    from argus.interp.exact.rules import EXACT_RULES
    k = compile_kernel(FRAGMENTS)
    op = next(op for op in k.walk() if op.opcode == "scan.prefix_sum")
    layout = layout_of(op.result.type)
    x = np.arange(64, dtype=np.float32) % 7
    gen = EXACT_RULES["scan.prefix_sum"](None, op, [Regs(layout, layout.from_logical(x))])
    with pytest.raises(StopIteration) as done:
        next(gen)
    out = done.value.value
    assert isinstance(out, Regs) and out.layout.same_as(layout)
    want = np.concatenate([[0], np.cumsum(x[:-1])]).astype(np.float32)
    np.testing.assert_array_equal(out.logical(), want)
    np.testing.assert_array_equal(out.data, layout.from_logical(want))


INT_FRAGMENT = '''
@kernel(grid=(1,), block=128)
def k(C: Tensor[8, int32]):
    f = load(tile(C, (8,), (0,)), "rows(blocked)")
    n = element(f, 7)
    v = to_indices(f)
'''


def test_element_and_to_indices_of_an_int32_fragment():
    k = compile_kernel(INT_FRAGMENT)
    f = np.array([4, 0, 9, 1, 1, 2, 3, 12], np.float32)   # fragments hold values as fp32
    assert run_rule(k, "indices.element", f, 7) == 12
    v = run_rule(k, "indices.from_frag", f)
    assert v.dtype == np.int64 and v.tolist() == [4, 0, 9, 1, 1, 2, 3, 12]
    with pytest.raises(InterpretError, match=rf"{FILE}:8:\d+: to_indices of non-integer"):
        run_rule(k, "indices.from_frag", f + 0.5)
