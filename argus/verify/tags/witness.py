"""Witness terms for "some step reaches this value", so that a coverage claim (for every k
there is a step accumulating it) becomes one quantifier-free query.

A term affine in some variables, with constant coefficients or with a coefficient that is
a term free of them (a product atom `ks * KS` of the scalars: coefficient KS for ks), is
inverted by Euclidean division, the symbolic coefficients first, then the constant ones
from the largest: for target x, ks := x / (64 * KS), then kk := (x % (64 * KS)) / 64, ...
The atom itself gets the exact value of the product, (x - x % (64 * KS)) / 64, so the
query holds no product of two symbols. A witness is only a candidate: the query still
requires that it satisfies every bound and that the term equals the target, so a wrong
candidate can only fail to prove coverage, never prove it wrongly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import z3

from argus.verify.smt import bv, mentions
from argus.verify.smt import relevant as _relevant, solve as _solve


@dataclass
class Entry:
    var: object                   # the variable's term
    scale: int                    # constant coefficient
    factor: Optional[object]      # a symbolic coefficient (the other factor of an atom)
    atom: Optional[object]        # the atom term standing for var * factor


def atoms_by_id(ctx) -> dict[int, tuple]:
    return {atom.get_id(): (atom, a, b) for atom, a, b in ctx.atoms.values()}


def _mentions(expr, ids: set[int]) -> bool:
    """Does expr contain a variable or atom with one of these ids (all constants)?"""
    return mentions(expr, ids)


def decompose(term, variables, atoms: dict[int, tuple]):
    """(constant part, {var id: Entry}) of `term` as a sum of the variables times constant
    or variable-free coefficients; None when it is not of that form."""
    var_ids = {v.get_id() for v in variables}
    relevant = set(var_ids)
    for key, (atom, a, b) in atoms.items():
        if _mentions(bv(a), var_ids) or _mentions(bv(b), var_ids):
            relevant.add(key)
    out: dict[int, Entry] = {}

    def add(entry: Entry) -> bool:
        key = entry.var.get_id()
        if key in out:
            old = out[key]
            if old.factor is not None or entry.factor is not None:
                return False
            old.scale += entry.scale
            return True
        out[key] = entry
        return True

    def walk(t, scale: int):
        """The constant part of scale * t, adding its entries; None if not affine."""
        if not _mentions(t, relevant):
            return t * scale if scale != 1 else t
        if t.get_id() in var_ids:
            return z3.BitVecVal(0, 64) if add(Entry(t, scale, None, None)) else None
        if t.get_id() in atoms:
            atom, a, b = atoms[t.get_id()]
            for x, y in ((bv(a), bv(b)), (bv(b), bv(a))):
                if x.get_id() in var_ids and not _mentions(y, relevant):
                    return z3.BitVecVal(0, 64) if add(Entry(x, scale, y, atom)) else None
            return None
        if z3.is_app_of(t, z3.Z3_OP_BADD):
            total = z3.BitVecVal(0, 64)
            for c in t.children():
                part = walk(c, scale)
                if part is None:
                    return None
                total = total + part
            return total
        if z3.is_app_of(t, z3.Z3_OP_BMUL) and len(t.children()) == 2:
            a, b = t.children()
            if z3.is_bv_value(b):
                a, b = b, a
            if z3.is_bv_value(a) and a.as_long() < (1 << 32):
                return walk(b, scale * a.as_long())
        return None

    const = walk(z3.simplify(bv(term)), 1)
    if const is None:
        return None
    return const, out


WITNESS_BITS = 32     # base variables are below 2^24, products of two below 2^48, but the
                      # values a coverage query divides (k, tile sizes) stay below 2^32


def _div(x, y):
    """x / y and x % y in WITNESS_BITS bits, widened back: cheaper for z3 than 64-bit
    division by a symbolic divisor. Exact below 2^32; above, only a worse candidate."""
    nx, ny = z3.Extract(WITNESS_BITS - 1, 0, bv(x)), z3.Extract(WITNESS_BITS - 1, 0, bv(y))
    widen = lambda t: z3.ZeroExt(64 - WITNESS_BITS, t)
    return widen(z3.UDiv(nx, ny)), widen(z3.URem(nx, ny))


def euclid(target, const, entries: dict[int, Entry]) -> list[tuple]:
    """Substitution pairs (variable or atom, witness term) making const + sum(entries) equal
    `target` when it can (the caller's query checks that it does)."""
    rem = bv(target) - bv(const)
    pairs = []
    ordered = sorted(entries.values(), key=lambda e: (e.factor is None, -e.scale))
    for e in ordered:
        if e.scale == 0:
            pairs.append((e.var, z3.BitVecVal(0, 64)))
            continue
        if e.factor is None:
            pairs.append((e.var, z3.UDiv(rem, e.scale)))
            rem = z3.URem(rem, e.scale)
            continue
        quotient, left = _div(rem, bv(e.factor) * e.scale)
        pairs.append((e.var, quotient))
        whole = rem - left                       # = var * factor * scale, exactly
        pairs.append((e.atom, whole if e.scale == 1 else z3.UDiv(whole, e.scale)))
        rem = left
    return pairs


def with_products(ctx, pairs: list[tuple]) -> list[tuple]:
    """`pairs` plus, for every product atom over a substituted variable that `pairs` does
    not already give a value, the real product of its substituted factors (so no atom is
    left free to take a value no product of the witnesses takes)."""
    done = {x.get_id() for x, _ in pairs}
    subs = [(x, y) for x, y in pairs]
    out = list(pairs)
    for atom, a, b in ctx.atoms.values():
        if atom.get_id() in done:
            continue
        if _mentions(bv(a), done) or _mentions(bv(b), done):
            out.append((atom, z3.simplify(z3.substitute(bv(a), *subs)
                                          * z3.substitute(bv(b), *subs))))
    return out


def _conjuncts(f) -> list:
    """The conjuncts of f, with those common to both branches of an if-then-else pulled
    out of it (If(j == 0, a & b0, a & b1) is a & If(j == 0, b0, b1))."""
    if z3.is_and(f):
        return [x for c in f.children() for x in _conjuncts(c)]
    if z3.is_app_of(f, z3.Z3_OP_ITE) and z3.is_bool(f):
        cond, then, other = f.children()
        left, right = _conjuncts(then), _conjuncts(other)
        shared = {x.get_id() for x in left} & {x.get_id() for x in right}
        if shared:
            rest = z3.If(cond, z3.And(*[x for x in left if x.get_id() not in shared]),
                         z3.And(*[x for x in right if x.get_id() not in shared]))
            return [x for x in left if x.get_id() in shared] + [rest]
    return [f]


def split_proof(facts, hyp, hits, kappa, below) -> bool:
    """Prove "under hyp, every k (below) has a hit" in two smaller proofs when every hit
    is (a part about k) and (a part about the rest: the element, the writer): under hyp
    some hit's rest holds, and every hit's k part holds for every k. Those imply the
    claim; the k parts of the warpgroups' and variants' writers are usually one formula,
    proved once. False when the hits do not split so or either proof fails (the caller
    then asks the whole claim)."""
    k_ids = {kappa.get_id()}
    rests, k_parts = [], []
    for hit in hits:
        about_k, rest = [], []
        for c in _conjuncts(hit):
            (about_k if _mentions(c, k_ids) else rest).append(c)
        if any(_mentions(c, k_ids) for c in rest):
            return False
        rests.append(z3.And(*rest))
        k_parts.append(z3.And(*about_k))
    for k_part in {x.get_id(): x for x in k_parts}.values():
        asked = [below, z3.Not(k_part)]
        if _solve([*_relevant(facts, asked), *asked], solver=False)[0] != z3.unsat:
            return False
    asked = [*hyp, z3.Not(z3.Or(*rests))]
    return _solve([*_relevant(facts, asked), *asked], solver=False)[0] == z3.unsat


def solve_exactly(ctx, target, term, variables):
    """(pairs, facts): a witness for each of `variables` making `term` equal `target`
    when `term` is affine in them with constant or variable-free symbolic coefficients
    (the block id of a segment start `bh * SQ`, or `(b * HQ + h) * SQ`: the coefficient's
    own factor solved in turn). Euclidean division by a symbolic coefficient f is not
    a divider here: fresh q and r with rest == q * f + r, r < f (a product atom), which
    the real quotient and remainder satisfy whenever the rest does not wrap (the facts
    say so only then), so an unsat query over the witnesses holds of the real ones.
    None when the term is not of that form."""
    atoms = atoms_by_id(ctx)
    ids = {v.get_id() for v in variables}
    # a factor that mentions the variables but is not one: solved for after the outer step
    inner = {}
    for atom, a, b in atoms.values():
        if not _mentions(bv(term), {atom.get_id()}):
            continue
        for x, y in ((bv(a), bv(b)), (bv(b), bv(a))):
            if x.get_id() not in ids and _mentions(x, ids) and not _mentions(y, ids):
                inner[x.get_id()] = x
    units = list(variables) + list(inner.values())
    got = decompose(term, units, atoms)
    if got is None:
        return None
    const, entries = got
    pairs, facts = [], []
    fits = z3.ULE(bv(const), bv(target))
    rest = bv(target) - bv(const)
    for e in sorted(entries.values(), key=lambda e: (e.factor is None, -e.scale)):
        if e.scale == 0:
            pairs.append((e.var, z3.BitVecVal(0, 64)))
            continue
        if e.factor is None:
            found = (z3.UDiv(rest, e.scale), z3.URem(rest, e.scale))
            q, r = found
        else:
            q = ctx.var("q#witness", "position")
            r = z3.BitVec(f"r#witness{len(ctx.vars)}", 64)
            product = bv(ctx.mul(q, e.factor))
            step = bv(e.factor) * e.scale
            facts.append(z3.Implies(z3.And(fits, z3.UGT(bv(e.factor), 0)),
                                    z3.And(rest == product * e.scale + r, z3.ULT(r, step))))
            pairs.append((e.atom, product))
        if e.var.get_id() in inner:
            sub = solve_exactly(ctx, q, e.var, variables)
            if sub is None:
                return None
            pairs += sub[0]
            facts += sub[1]
        else:
            pairs.append((e.var, q))
        rest = r
    return pairs, facts


def rebuild_atoms(ctx, pairs: list[tuple]) -> list[tuple]:
    """`pairs` plus, for every product atom over a substituted variable that `pairs` does
    not already give a value, the atom of its substituted factors (Context.mul: an atom
    again, with its facts, never a product of two symbols), inner atoms first."""
    done = {x.get_id() for x, _ in pairs}
    out = list(pairs)
    for atom, a, b in list(ctx.atoms.values()):     # in creation order: inner ones first
        if atom.get_id() in done:
            continue
        ids = {x.get_id() for x, _ in out}
        if _mentions(bv(a), ids) or _mentions(bv(b), ids):
            out.append((atom, bv(ctx.mul(z3.substitute(bv(a), *out),
                                         z3.substitute(bv(b), *out)))))
            done.add(atom.get_id())
    return out
