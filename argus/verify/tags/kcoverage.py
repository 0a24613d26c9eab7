"""Every k in [0, K) is accumulated exactly once into every stored element, counting
only the products that can be non-zero (TMA fills elements outside a tensor with zeros,
so a k step past K adds nothing): no two (site, loop counters, j, kk) give one k below K,
and every k below K has a witness step."""

from __future__ import annotations

import z3

from argus.verify.finding import Finding
from argus.verify.smt import TIMEOUT_MS, bv, holds, relevant, solve, value

from . import report
from .witness import split_proof
from .abstraction import confirmed_model, refuted


def k_coverage(w, op, tag, inst, bounds, scope, src, wg, base, dst, *, refine=None,
               index_instantiated=False, k_range=None) -> None:
    """Every k in [0, K) is accumulated exactly once into every element, counting only the
    products that can be non-zero (TMA fills elements outside a tensor with zeros, so a
    k step past K adds nothing). dst: (tensor name, destination coordinate terms) of the
    stored element, over the fragment's positions (instantiated with `inst`) or, with
    `index_instantiated`, already over the variables of the query; `refine(model, cex)`
    may add to a counterexample (e.g. the thread that wrote the element). `k_range`
    (lo, width): the k that must be met (lo <= k < lo + width), when not all of [0, K)."""
    contribs = tag.contributions
    if not contribs:
        return
    kk, jv = w.pos["kk"], w.pos["j"]
    extent = bv(contribs[0].axis_extent)
    tensor, coords = dst

    index = list(coords) if index_instantiated else [inst(c) for c in coords]

    def cex_of(model, k, times):
        element = report.element(model, tensor, index,
                                 {"k": k, "times accumulated": times},
                                 {"times accumulated": 1})
        cex = report.counterexample(w, model, scope, layout=src.layout, warpgroup=wg,
                                    thread_base=base, elements=(element,))
        return refine(model, cex) if refine else cex
    # exactly once: two different (site, step, j, kk) never give one k below K
    chains = [_chained(jv, c, w.path) for c in contribs]
    for i, (c, (k_c, ok_c)) in enumerate(zip(contribs, chains)):
        for d, (k_d, ok_d) in list(zip(contribs, chains))[i:]:
            names = [*d.accumulated, "kk", "j"]
            copies, related = w.ctx.copy_with_products(names, "''")
            other = lambda x: z3.substitute(x, *copies)
            ranges = [z3.ULT(kk, c.kinstr), z3.ULT(jv, len(c.k)),
                      other(z3.ULT(kk, d.kinstr)), other(z3.ULT(jv, len(d.k))), *related]
            differ = (z3.Or(*[a != b for a, b in copies[:len(names)]]) if d is c
                      else z3.BoolVal(True))
            same_k = z3.And(inst(k_c) == other(inst(k_d)), z3.ULT(inst(k_c), extent))
            if d is c and holds(w.ctx, z3.Not(z3.And(differ, same_k)), ranges):
                continue   # even ignoring where the element is: no two steps share a k
            twice = z3.And(differ, inst(ok_c), other(inst(ok_d)), same_k)
            if holds(w.ctx, z3.Not(twice), [*w.path, *bounds, *ranges]):
                continue
            model = report.find(w, twice, scope, [*bounds, *ranges])
            if model is None:
                continue
            w.report(Finding("tag.k-coverage", "error",
                             f"k = {value(model, inst(k_c))} is accumulated twice into one "
                             f"element", d.loc, "wgmma",
                             "each k step must load a different k tile",
                             cex_of(model, inst(k_c), 2)))
            return
    _k_surjective(w, contribs, inst, bounds, scope, extent, cex_of, tensor, k_range)


def _chained(jv, c, path):
    """The per-j terms of a contribution as one term over the variable j, its validity as
    asked at a use under `path` (Contribution.valid_under)."""
    valid = c.valid_under(path)
    k, ok = bv(c.k[-1]), valid[-1]
    for j in range(len(c.k) - 2, -1, -1):
        k, ok = z3.If(jv == j, bv(c.k[j]), k), z3.If(jv == j, valid[j], ok)
    return k, ok


def steps(w, c, path):
    """The k term and validity of a contribution's instructions: one (term over j, j) when
    they are evenly spaced in k (k_j = k_0 + j * step: one witness for all), else one per j
    (terms, validity, and the variables to witness besides the loop counters and kk)."""
    jv = w.pos["j"]
    k0 = bv(c.k[0])
    if len(c.k) > 1:
        step = z3.simplify(bv(c.k[1]) - k0)
        if z3.is_bv_value(step) and all(
                z3.is_bv_value(d) and d.as_long() == j * step.as_long()
                for j, d in enumerate(z3.simplify(bv(x) - k0) for x in c.k)):
            return [(k0 + jv * step.as_long(), _chained(jv, c, path)[1], [jv])]
    valid = c.valid_under(path)
    return [(bv(c.k[j]), valid[j], []) for j in range(len(c.k))]


def _k_surjective(w, contribs, inst, bounds, scope, extent, cex_of, tensor,
                  k_range=None) -> None:
    """Every k below K is met: a witness step (Euclidean division of the affine k term by
    its coefficients) must exist for every k; a model is confirmed before it is reported."""
    kappa = z3.BitVec("k_missed", 64)
    kk = w.pos["kk"]
    hit_exact, hit_witness = [], []
    for c in contribs:
        facts = [f for n in c.accumulated for f in w.ctx.var_facts[n]] + [z3.ULT(kk, c.kinstr)]
        for k_j, ok_j, j_free in steps(w, c, w.path):
            names = [*c.accumulated, "kk", *(["j"] if j_free else [])]
            k_term = inst(k_j)
            here = z3.And(inst(ok_j), k_term == kappa, *facts,
                          *([z3.ULT(w.pos["j"], len(c.k))] if j_free else []))
            hit_exact.append(here)
            pairs = _affine_witness(w, k_term, names, kappa)
            if pairs is None:
                w.report(Finding("tag.k-coverage", "warning",
                                 "the k coordinate is not affine in the loop counters; k "
                                 "coverage not verified", c.loc, "wgmma",
                                 "index k tiles by the k loop counter"))
                return
            hit_witness.append(z3.substitute(here, *pairs))
    below = z3.ULT(kappa, extent)
    if k_range is not None:
        # every k of the range, inside the tensor or not: a range past the tensor's
        # columns reads TMA zeros there, which is no contraction (a head-dim tile at the
        # wrong column block)
        lo, width = k_range
        below = z3.ULT(kappa - bv(lo), width)      # lo <= k < lo + width, with no wrap
    goal = z3.And(below, z3.Not(z3.Or(*hit_witness)))
    asked = [*w.path, *bounds, goal]
    if refuted(w.ctx, asked):          # routing sums (MoE): abstracted or in integers
        return
    # a counterexample the integers found and the bit-vectors confirmed: no proof to try
    if confirmed_model(w.ctx, asked) is None:
        if split_proof(w.ctx.facts, [*w.path, *bounds], hit_witness, kappa, below):
            return
        if solve([*relevant(w.ctx.facts, asked), *asked], solver=False)[0] == z3.unsat:
            return
    model = report.find(w, goal, scope, bounds, minimise_first=(kappa,))
    if model is None:
        return
    keep = [v.term == value(model, v.term) for n, v in w.ctx.vars.items()
            if n not in (*contribs[0].accumulated, "kk", "j")]
    confirm = z3.Solver()
    confirm.set("timeout", TIMEOUT_MS)
    confirm.add(*w.ctx.facts, *w.ctx.product_facts(), *bounds, *keep,
                kappa == value(model, kappa), z3.Or(*hit_exact))
    missed = value(model, kappa)
    missed = missed - (1 << 64) if missed >= 1 << 63 else missed    # a column before 0
    cex = cex_of(model, kappa, 0)
    where = f"{tensor}[{', '.join(map(str, cex.elements[0].index))}]"
    if confirm.check() == z3.unsat:
        w.report(Finding("tag.k-coverage", "error",
                         f"k = {missed} is never accumulated into {where} (K = "
                         f"{value(model, extent)})",
                         contribs[0].loc, "wgmma",
                         "every k step must load the k tile of its own counter (tile(A, box, "
                         "(tm, k))), the k loop must cover K (KT = cdiv(K, BK), or "
                         "assume(K % BK == 0)), and no if inside it may skip a step's wgmma",
                         cex))
    else:
        w.report(Finding("tag.k-coverage", "warning",
                         "could not prove that every k is accumulated", contribs[0].loc,
                         "wgmma", "index k tiles by the k loop counter"))


def _affine_witness(w, term, names, target):
    """Witness terms for the variables `names` making `term` equal `target`, when term is
    affine in them with constant coefficients; None otherwise."""
    vs = [w.ctx.vars[n].term for n in names]
    zero = [(v, z3.BitVecVal(0, 64)) for v in vs]
    rest = z3.substitute(term, *zero)
    coeffs = []
    for v in vs:
        one = z3.simplify(z3.substitute(term, *[(u, z3.BitVecVal(1 if u.eq(v) else 0, 64))
                                                for u in vs]) - rest)
        if not z3.is_bv_value(one):
            return None
        coeffs.append(one.as_long())
    linear = rest
    for v, a in zip(vs, coeffs):
        linear = linear + a * v
    if not holds(w.ctx, term == linear):
        return None
    remaining = z3.simplify(target - rest)     # a segment start in both cancels here
    pairs = []
    for v, a in sorted(zip(vs, coeffs), key=lambda p: -p[1]):
        if a == 0:
            pairs.append((v, z3.BitVecVal(0, 64)))
            continue
        pairs.append((v, z3.simplify(z3.UDiv(remaining, a))))
        remaining = z3.simplify(z3.URem(remaining, a))
    return pairs


