"""Families of disjoint windows (argus/verify/tags/window_families.py): the three lemmas of
an exclusive prefix sum's windows are true of the spelt-out sums the tag pass builds (proved
by z3 for small vectors, for every count), the windows are recognised where the walk and
its copies build them and nowhere else, and a library grouped GEMM over 64 experts verifies
through them."""

from __future__ import annotations

from pathlib import Path

import pytest
import z3

from argus.frontend import parse_file
from argus.verify import driver, integers
from argus.verify.smt import Context, WIDTH
from argus.verify.tags import window_families as wf
from argus.verify.tags.routing import IndexVector

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 1 << 24                   # routing counts are below this (every base variable is)


def _vector(n, name="counts"):
    """(ctx, counts, the sum's IndexVector, the counts' IndexVector, the registered Sum),
    built as routing.py builds them: entries simplified, the sum registered."""
    ctx = Context()
    counts = z3.Function(name, z3.BitVecSort(WIDTH), z3.BitVecSort(WIDTH))
    parts = tuple(counts(z3.BitVecVal(i, WIDTH)) for i in range(n))
    sums, total = [], z3.BitVecVal(0, WIDTH)
    for x in parts:
        sums.append(total)
        total = z3.simplify(total + x)
    wf.register(ctx, parts, sums, total)
    return ctx, counts, IndexVector(n, tuple(sums)), IndexVector(n, parts), \
        wf.registry(ctx).sums[-1]


def _bounded(counts, n):
    return [z3.ULT(counts(z3.BitVecVal(i, WIDTH)), LIMIT) for i in range(n)]


def _proved(facts, claim) -> bool:
    """facts imply claim: decided exactly in integers (integers.py: every bit-vector
    operation keeps its modular meaning), where bit-blasted adders of five counts take
    z3 most of a minute."""
    answer = integers.check(facts, z3.Not(claim), exact=True)
    assert answer in (z3.sat, z3.unsat)
    return answer == z3.unsat


@pytest.mark.parametrize("n", [1, 2, 6])
def test_the_three_lemmas_hold_of_the_spelt_out_sums(n):
    ctx, counts, offs, cnt, s = _vector(n)
    a, b, row = z3.BitVecs("a b row", WIDTH)
    facts = _bounded(counts, n)
    start = lambda i: offs.entry(i)
    rows = lambda i: cnt.entry(i)
    inside = lambda i, r: z3.And(z3.UGE(r, start(i)), z3.ULT(r, start(i) + rows(i)))
    # 1. inside: a window ends by the total
    assert _proved(facts, z3.Implies(z3.ULT(a, n), z3.ULE(start(a) + rows(a), s.total)))
    # 2. disjoint: two entries' windows share no row
    assert _proved(facts, z3.Implies(z3.And(z3.ULT(a, n), z3.ULT(b, n), a != b),
                                     z3.Not(z3.And(inside(a, row), inside(b, row)))))
    # 3. tiling: the windows of every entry are exactly the rows below the total
    union = z3.Or(*[inside(z3.BitVecVal(i, WIDTH), row) for i in range(n)])
    assert _proved(facts, union == z3.ULT(row, s.total))


def test_the_tiling_needs_the_whole_loop():
    """One entry short of the vector, the windows miss rows below the total: a loop over
    range(n - 1) must not be taken for the tiling (segstores._tiling checks the bound)."""
    n = 4
    ctx, counts, offs, cnt, s = _vector(n)
    row = z3.BitVec("row", WIDTH)
    union = z3.Or(*[z3.And(z3.UGE(row, offs.entry(i)), z3.ULT(row, offs.entry(i) + cnt.entry(i)))
                    for i in range(n - 1)])
    assert not _proved(_bounded(counts, n), union == z3.ULT(row, s.total))


def test_windows_are_recognised_where_the_walk_and_its_copies_build_them():
    ctx, counts, offs, cnt, s = _vector(6)
    e, e2 = z3.BitVecs("e e#2", WIDTH)
    assert wf.window_of(ctx, offs.entry(e), cnt.entry(e)) == (s, e)
    copy = [z3.substitute(t, (e, e2)) for t in (offs.entry(e), cnt.entry(e))]
    got = wf.window_of(ctx, *copy)
    assert got is not None and got[0] is s and got[1].eq(e2)
    assert wf.window_of(ctx, offs.entry(3), cnt.entry(3)) == (s, 3)


def test_other_windows_are_not_taken_for_a_prefix_sums():
    ctx, counts, offs, cnt, s = _vector(6)
    e, f = z3.BitVecs("e f", WIDTH)
    assert wf.window_of(ctx, offs.entry(e) + 1, cnt.entry(e)) is None         # shifted
    assert wf.window_of(ctx, offs.entry(e), cnt.entry(e) + 1) is None         # one row long
    assert wf.window_of(ctx, offs.entry(e), cnt.entry(f)) is None             # two indices
    assert wf.window_of(ctx, offs.entry(2), cnt.entry(3)) is None
    assert wf.window_of(ctx, cnt.entry(e), offs.entry(e)) is None             # swapped
    other = _vector(6, "slots")                                # another context's vector
    assert wf.window_of(ctx, other[2].entry(e), other[3].entry(e)) is None


def test_products_of_a_counter_are_recognised_as_the_context_builds_them():
    ctx = Context()
    e = ctx.var("e", "iteration", upper=8)
    ctx.small[e.sexpr()] = 8
    f = ctx.var("F", "size", lower=1)
    g = ctx.var("g", "iteration")
    short = ctx.mul(e, f)              # the exact if-then-else over e's eight values
    got = wf.product_of(ctx, short)
    assert got is not None and got[0].eq(e) and got[1].eq(f)
    atom = ctx.mul(g, f)               # a product atom
    got = wf.product_of(ctx, atom)
    assert got is not None and {got[0].get_id(), got[1].get_id()} == {g.get_id(), f.get_id()}
    assert wf.product_of(ctx, f + 1) is None


def test_the_library_gate_up_over_64_experts_verifies():
    overrides = {"E": 64, "DT": "bf16", "BN": 128, "S": 4, "ORDER": "n_major",
                 "GATHER": "warpgroup"}
    kernel = parse_file(ROOT / "argus" / "kernels" / "moe_gate_up.py",
                        overrides=overrides)["moe_gate_up"]
    result = driver.run(kernel, 1)
    assert result.verdict == "verified", [f.message for f in result.findings]
