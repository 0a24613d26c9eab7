"""How argus.verify.smt asks z3: the memo of answered conjunctions, the facts connected to a
claim, and the modular lemmas added to a query. Each must leave every answer as it was."""

from __future__ import annotations

import z3

from argus.verify import smt


def test_an_unsat_conjunction_is_solved_once_and_only_that_one():
    x = z3.BitVec("memo_x", 64)
    asked = [z3.ULT(x, 4), z3.UGT(x, 9)]
    result, solver = smt.solve(asked)
    assert result == z3.unsat and solver is not None
    assert smt.known_unsat(asked) and smt.known_unsat(list(reversed(asked)))
    again, solver = smt.solve([z3.UGT(x, 9), z3.ULT(x, 4)])
    assert again == z3.unsat and solver is None           # remembered, not solved
    other, solver = smt.solve([z3.ULT(x, 4), z3.UGT(x, 2)])
    assert other == z3.sat and solver.model().eval(x).as_long() == 3
    assert not smt.known_unsat([z3.ULT(x, 4), z3.UGT(x, 2)])


def test_yes_no_answers_are_remembered_both_ways():
    y = z3.BitVec("memo_y", 64)
    assert smt.verdict([z3.ULT(y, 4), y == 2]) == z3.sat
    assert smt.verdict([z3.ULT(y, 4), y == 2]) == z3.sat
    assert smt.verdict([z3.ULT(y, 4), y == 7]) == z3.unsat


def test_only_connected_facts_are_given_to_a_proof():
    a, b, c = z3.BitVecs("rel_a rel_b rel_c", 64)
    facts = [z3.ULT(a, 5), a == b, z3.ULT(c, 3), z3.BoolVal(True)]
    kept = smt.relevant(facts, [z3.UGT(b, 7)])
    assert any(f.eq(facts[0]) for f in kept) and any(f.eq(facts[1]) for f in kept)
    assert not any(f.eq(facts[2]) for f in kept)          # c is not connected to b


def test_holds_falls_back_on_nothing_it_should_not():
    """A claim that needs a fact reachable only through another fact is still proved."""
    ctx = smt.Context()
    a = ctx.var("a", "iteration", upper=5)
    b = ctx.var("b", "iteration")
    ctx.fact(b == a * 2)
    assert smt.holds(ctx, z3.ULT(b, 10))
    assert not smt.holds(ctx, z3.ULT(b, 8))


def test_modular_lemmas_are_true_and_make_the_stage_question_easy():
    for width in (8, 12):
        g, p = z3.BitVecs(f"lem_g{width} lem_p{width}", width)
        x, y = z3.URem(g + p, 3), z3.URem(g + p - 1, 3)
        lemmas = smt.mod_lemmas([x == y])
        assert lemmas
        for lemma in lemmas:                               # each is valid on its own
            s = z3.Solver()
            s.add(z3.Not(lemma))
            assert s.check() == z3.unsat
    g, p = z3.BitVecs("lem_g lem_p", 64)
    question = [z3.ULT(g, 1 << 24), z3.ULT(p, 1 << 24), z3.UGE(g, 1),
                z3.URem(g + p, 3) == z3.URem(g + p - 1, 3)]
    assert smt.solve(question)[0] == z3.unsat
    # powers of two are bit extractions: no lemma needed or made
    assert smt.mod_lemmas([z3.URem(g, 4) == z3.URem(g - 1, 4)]) == []
