"""A counterexample found in integers, made exact and carried back to the bit-vectors.

`holds(..., in_integers=True)` first asks its claim's negation in linear integer arithmetic
(integers.py). When that is unsat the claim is proved; when it is sat, the claim is
usually false (a wrong tag_assert of a MoE kernel), and the bit-vector solver then spends
two or three solves (0.2 s each on routing sums) finding what the integers already found.
The integer model cannot be taken as it is: a product atom (`e * F`) is a free integer
there, and the facts translated are only those that translate. So it is made exact first,
as smt._lazy_check does for the bit-vectors: where the model gives an atom another value
than the product of its factors' values, the true linear instances of the product at
those values (x == vx => atom == vx * y, y == vy => atom == vx... ) are added and the
integer solver asked again, a few rounds at most. Then every leaf of the query (each
variable, product atom and routing value) is pinned to its value, and the bit-vector
formulas themselves, with every product atom's real product, are checked under the pins.

Only a sat answer of that last check is used: a model of the real query with real
products, so the claim is false and `holds` answers False as its own solve would have.
Anything else (a round limit, an unknown, a pinned check that fails) gives None, and the
caller goes on as before: nothing here can make a claim hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import z3

from argus.verify import integers, termscan

if TYPE_CHECKING:      # smt calls this module: no import of smt at run time
    from argus.verify.smt import Context

PRODUCT_ROUNDS = 4       # rounds of product instances before giving up on the integers
PINNED_MS = 1000         # the bit-vector check with every leaf pinned: an evaluation, nearly


def decide(ctx: Context, facts, goal) -> tuple:
    """facts & goal asked in integers: (unsat, None) when impossible (integers.unsat_in);
    (sat, model) with a bit-vector model of facts & goal in which every product atom they
    reach is its product; (unknown, None) when the query does not translate, the integer
    solver gives up, or its model does not carry back (the caller asks the bit-vectors)."""
    try:
        verdict, s, tr, asked = integers.solve_in(ctx, facts, goal)
    except integers.Untranslatable:
        return z3.unknown, None
    if verdict == z3.unsat:
        return z3.unsat, None
    model = _carried_back(ctx, facts, goal, s, tr, asked) if verdict == z3.sat else None
    return (z3.sat, model) if model is not None else (z3.unknown, None)


def _carried_back(ctx: Context, facts, goal, s, tr, asked):
    formulas = [*facts, goal]
    atoms = _atoms_reached(ctx, formulas)
    try:
        products = [(tr.term(atom), tr.term(x), tr.term(y)) for atom, x, y in atoms]
    except integers.Untranslatable:
        return None
    model = _exact(s, products)
    if model is None:
        return None
    ids = set()
    for f in asked:
        ids |= termscan.scan(f).variables
    pins = [leaf == model.eval(x, model_completion=True).as_long()      # leaves of the
            for leaf, x in tr.leaves if termscan.scan(x).variables <= ids]  # query only
    b = z3.Solver()
    b.set("timeout", PINNED_MS)
    b.add(*formulas, *[atom == x * y for atom, x, y in atoms], *pins)
    return b.model() if b.check() == z3.sat else None


def _atoms_reached(ctx: Context, formulas) -> list:
    """(atom, x, y) of every product atom the formulas mention, and of the atoms inside
    those atoms' factors."""
    return termscan.products_reached(ctx.atoms, formulas)


def _exact(s, products):
    """A model of s giving every integer atom the product of its factors' values, found
    by adding true instances of the products (s is sat); None after PRODUCT_ROUNDS."""
    return s.model() if exact_check(s, products, checked=True)[0] == z3.sat else None


def exact_check(s, products, checked: bool = False) -> tuple:
    """s.check() until its model gives every integer atom of `products` ((atom, x, y),
    integer terms) the product of its factors' values: where it does not, the true linear
    instances of the product at the model's factors are asserted and s asked again, at
    most PRODUCT_ROUNDS times (then unknown). Returns the answer and the instances
    asserted (true facts: a caller that pops the scope they went into asserts them
    again). `checked`: s was just checked and is sat."""
    added = []
    for rounds in range(PRODUCT_ROUNDS + 1):
        verdict = z3.sat if checked and not rounds else s.check()
        if verdict != z3.sat:
            return verdict, added
        lemmas = product_lemmas(s.model(), products)
        if not lemmas:
            return verdict, added
        s.add(*lemmas)
        added += lemmas
    return z3.unknown, added


def product_lemmas(m, products) -> list:
    """For each product the model m gets wrong, its instances at m's factor values:
    x == vx => atom == vx * y, y == vy => atom == vy * x (true, and linear)."""
    out = []
    for atom, x, y in products:
        va, vx, vy = (m.eval(t, model_completion=True).as_long() for t in (atom, x, y))
        if va != vx * vy:
            out.append(z3.And(z3.Implies(x == vx, atom == vx * y),
                              z3.Implies(y == vy, atom == vy * x)))
    return out
