"""Which keys reach each output row of attention: checked at o / l, for every element of o
(through its TV layout: thread and register), every block and every sizes.

With q the element's query row (its row tag) and need(q, key) the mask's specification
(mask.py; every key when the scores are not masked):
  - no key is accumulated twice (two different (block, instruction, kk) with one key
    whose product can be non-zero);
  - every key below the key extent with need(q, key) is accumulated: a witness step is
    built by Euclidean division of the affine key term (as kcoverage.py does for k) and a
    model is confirmed before it is reported. A key of a block the loop skips is such a
    key when the skipped block is not fully masked; the finding names the loop;
A key the mask drops is never accumulated with a non-zero weight by construction: its p is
exp2(-inf - m) = 0 (the contribution's non-zero condition is the mask), and the mask is
the predicate the tag_assert proved equal to need(row tag, col tag) on P's own tags (the
wgmma proved P.row == o.row and P.key == V.key), so no query is needed for it.
Without a specification of the mask, the keys of skipped blocks cannot be named and the
check is a warning."""

from __future__ import annotations

from dataclasses import replace

import z3

from argus.ir.nodes import Op
from argus.verify.finding import Finding
from argus.verify.smt import TIMEOUT_MS, bv, holds, integer_unsat, value

from . import report, segments
from .kcoverage import _affine_witness, _chained
from .meaning import Series, state
from .violations import atom_of, element, locate


def check(w, op: Op, o, series: Series) -> None:
    contribs = o.tag.contributions
    if not contribs or "row" not in o.tag.fields or "col" not in o.tag.fields:
        return
    inside = [n for c in contribs for n in c.accumulated if n in w.scope_vars()]
    if inside:
        # the contributions stand for every iteration of their loop: inside it, o holds
        # only the blocks so far
        w.not_modelled(op, "o / l inside the key loop (only after it is modelled)")
        return
    # every element of o, by position (the counterexample names the thread that holds it)
    bounds = [z3.ULT(w.pos["pr"], o.shape[0]), z3.ULT(w.pos["pc"], o.shape[1])]
    inst = lambda x: x if isinstance(x, z3.BoolRef) else bv(x)
    q, d = bv(o.tag.fields["row"]), bv(o.tag.fields["col"])
    extent = bv(contribs[0].axis_extent)
    need = None
    if series.mask is None:
        need = lambda key: z3.BoolVal(True)
    elif series.mask.spec is not None and _same_tags(series.mask.spec_tags, series.fields):
        need = lambda key: series.mask.spec(q, key)
    else:
        w.report(Finding(
            "tag.key-coverage", "warning",
            f"the mask of {series.name} (line {series.loc.line}) is not specified over the "
            f"tags, so the keys of the blocks the loop skips are not verified",
            series.mask.loc, "select",
            "state the mask: tag_assert(keep == (tag(s).col <= tag(s).row)) (causal)"))
    if _twice(w, op, contribs, inst, bounds, q, d, extent, o.layout):
        return
    if need is None:
        return
    _missed(w, op, contribs, inst, bounds, q, d, extent, need, o.layout)


def _same_tags(spec_tags, fields) -> bool:
    """The specification was proved on the very tags of the masked tile."""
    if len(spec_tags) != 2 or not {"row", "col"} <= fields.keys():
        return False
    return all(z3.is_true(z3.simplify(bv(a) == bv(fields[f])))
               for a, f in zip(spec_tags, ("row", "col")))


def _cex(w, model, o_layout, q, d, key, times, expected, extra_iter=None):
    """The element is named by its tags, (query row, column) of the attention output, and
    by the thread and register of o that hold it."""
    wg = report.warpgroup_of(w, model)
    base = wg * 128 if wg is not None else 0
    el = element(model, lambda x: x, "o", (q, d), {"key": key, "times accumulated": times},
                 {"times accumulated": expected})
    cex = report.counterexample(w, model, w.scope_vars(), warpgroup=wg, elements=(el,),
                                extra_iter=extra_iter)
    atom = atom_of(o_layout)
    if atom is None:
        return cex
    t, v, cell = locate(atom, value(model, w.pos["pr"]), value(model, w.pos["pc"]))
    return replace(cex, thread=base + t, warp=(base + t) // 32, lane=(base + t) % 32,
                   register=v, layout=atom, cell=cell)


def _injective(w, c) -> bool:
    """The keys of one contribution are distinct for distinct (loop counters, instruction,
    kk), proved syntactically: the key is affine in them and its coefficients form a
    mixed radix (each exceeds the span of the smaller ones over their constant ranges;
    only the largest may have a symbolic range)."""
    gen = state(w).keygens.get(id(c))
    if gen is None:
        return False
    key, _, count = gen
    names = [*c.accumulated, "j", "kk"]
    coeffs = _coefficients(w, key, names)
    if coeffs is None or any(a == 0 for a in coeffs.values()):
        return False
    ranges = {"j": count, "kk": c.kinstr}
    order = sorted(coeffs, key=coeffs.get)
    span = 0
    for smaller, larger in zip(order, order[1:]):
        rng = ranges.get(smaller)
        if rng is None:
            return False
        span += coeffs[smaller] * (rng - 1)
        if span >= coeffs[larger]:
            return False
    return True


def _disjoint_parts(w, contribs, inst, bounds) -> bool:
    """The sites are the parts of one split loop: one key term over the same counters, each
    injective, so one key is met twice only at one (counters, instruction, kk) that two
    sites both add at, which their part ranges (in the validity) exclude; proved without
    the copies of the counters the general query needs."""
    gens = state(w).keygens
    if len(contribs) < 2 or any(id(c) not in gens for c in contribs):
        return False
    first = gens[id(contribs[0])]
    for c in contribs:
        key, _, count = gens[id(c)]
        if count != first[2] or c.accumulated != contribs[0].accumulated or \
                not z3.is_true(z3.simplify(bv(key) == bv(first[0]))) or not _injective(w, c):
            return False
    ranges = [z3.ULT(w.pos["kk"], contribs[0].kinstr), z3.ULT(w.pos["j"], first[2])]
    for i, c in enumerate(contribs):
        for other in contribs[i + 1:]:
            both = z3.And(inst(gens[id(c)][1]), inst(gens[id(other)][1]))
            if not holds(w.ctx, z3.Not(both), [*w.path, *bounds, *ranges]):
                return False
    return True


def _coefficients(w, term, names):
    """{name: coefficient} when term is affine in the variables `names`, else None."""
    vs = [w.ctx.vars[n].term for n in names]
    zero = z3.substitute(term, *[(v, z3.BitVecVal(0, 64)) for v in vs])
    out, linear = {}, zero
    for n, v in zip(names, vs):
        one = z3.simplify(z3.substitute(term, *[(u, z3.BitVecVal(1 if u.eq(v) else 0, 64))
                                                for u in vs]) - zero)
        if not z3.is_bv_value(one):
            return None
        out[n] = one.as_long()
        linear = linear + out[n] * v
    return out if holds(w.ctx, term == linear) else None


def _twice(w, op, contribs, inst, bounds, q, d, extent, layout) -> bool:
    kk, jv = w.pos["kk"], w.pos["j"]
    if len(contribs) == 1 and _injective(w, contribs[0]):
        return False
    if _disjoint_parts(w, contribs, inst, bounds):
        return False
    chains = [_chained(jv, c, w.path) for c in contribs]
    for i, (c, (k_c, ok_c)) in enumerate(zip(contribs, chains)):
        for dd, (k_d, ok_d) in list(zip(contribs, chains))[i:]:
            copies = w.ctx.copy_vars([*dd.accumulated, "kk", "j"], "''")
            other = lambda x: z3.substitute(x, *copies)
            ranges = [z3.ULT(kk, c.kinstr), z3.ULT(jv, len(c.k)),
                      other(z3.ULT(kk, dd.kinstr)), other(z3.ULT(jv, len(dd.k)))]
            differ = z3.Or(*[a != b for a, b in copies]) if dd is c else z3.BoolVal(True)
            twice = z3.And(differ, inst(ok_c), other(inst(ok_d)),
                           inst(k_c) == other(inst(k_d)), z3.ULT(inst(k_c), extent))
            if holds(w.ctx, z3.Not(twice), [*w.path, *bounds, *ranges]):
                continue
            model = report.find(w, twice, w.scope_vars(), [*bounds, *ranges])
            if model is None:
                continue
            key = inst(k_c)
            w.report(Finding(
                "tag.key-coverage", "error",
                f"key {value(model, key)} is accumulated twice into row "
                f"{value(model, q)} of the attention output", dd.loc, "wgmma",
                "accumulate each key block once: P of block j with the V tile of block j",
                _cex(w, model, layout, q, d, key, 2, 1)))
            return True
    return False


def _base(w, contribs) -> object:
    """The first key of the keys' segment (its window's start) when the keys are a segment,
    else None. The missed key is then written base + x: the key terms (base + j * BN + ...)
    and the window test (x < rows) lose the segment's product atom (b * SK) and the query
    stays linear."""
    window = contribs[0].k_window
    if window is None or any(c.k_window is not window for c in contribs):
        return None
    return bv(window.start)


def _missed(w, op, contribs, inst, bounds, q, d, extent, need, layout) -> None:
    local = z3.BitVec("key_missed", 64)
    base = _base(w, contribs)
    kappa = local if base is None else base + local
    kk = w.pos["kk"]
    hit_exact, hit_witness, witnesses = [], [], []
    gens = state(w).keygens
    for c in contribs:
        names = [*c.accumulated, "kk"]
        facts = [f for n in c.accumulated for f in w.ctx.var_facts[n]] + [z3.ULT(kk, c.kinstr)]
        if id(c) in gens:       # one term over the instruction index: one witness
            key, valid, count = gens[id(c)]
            valid = z3.And(valid, *c.unheld(w.path))
            names.append("j")
            facts.append(z3.ULT(w.pos["j"], count))
            steps = [(key, valid)]
        else:
            steps = [(bv(c.k[j]), v) for j, v in enumerate(c.valid_under(w.path))]
        for k_term, valid in steps:
            k_term = inst(k_term)
            here = z3.And(inst(valid), k_term == kappa, *facts)
            hit_exact.append(here)
            pairs = _affine_witness(w, k_term, names, kappa)
            if pairs is None:
                w.report(Finding("tag.key-coverage", "warning",
                                 "the key index is not affine in the loop counters; the keys "
                                 "reaching each row are not verified", c.loc, "wgmma",
                                 "index key tiles by the key loop counter"))
                return
            hit_witness.append(z3.substitute(here, *pairs))
            witnesses.append(pairs)
    # a key of the row's own head: below the extent, inside the keys' segment if they are one
    own = segments.in_window(contribs[0].k_window, kappa) if contribs[0].k_window is not None \
        else z3.BoolVal(True)
    goal = z3.And(z3.ULT(kappa, extent), own, need(kappa), z3.Not(z3.Or(*hit_witness)))
    # in integers first (exact: bit-blasting the causal bound's divisions took seconds)
    if integer_unsat(w.ctx, [*w.ctx.facts, *w.path, *bounds], goal):
        return
    s = z3.Solver()
    s.set("timeout", TIMEOUT_MS)
    s.add(*w.ctx.facts, *w.path, *bounds, goal)
    if s.check() == z3.unsat:
        return
    model = report.find(w, goal, w.scope_vars(), bounds, minimise_first=(local,))
    if model is None:
        return
    loops = contribs[0].accumulated
    keep = [v.term == value(model, v.term) for n, v in w.ctx.vars.items()
            if n not in (*loops, "kk", "j") and v.kind != "thread" and v.kind != "register"]
    confirm = z3.Solver()
    confirm.set("timeout", TIMEOUT_MS)
    confirm.add(*w.ctx.facts, *w.ctx.product_facts(), *bounds, *keep,
                local == value(model, local), z3.Or(*hit_exact))
    key, row = value(model, kappa), value(model, q)
    st = state(w)
    loop = next((n for n in loops if n in st.loop_ops), None)
    if confirm.check() != z3.unsat:
        w.report(Finding("tag.key-coverage", "warning",
                         "could not prove that every unmasked key reaches every row",
                         contribs[0].loc, "wgmma", "index key tiles by the key loop counter"))
        return
    if loop is not None:
        name = w.ctx.vars[loop].name
        block = value(model, dict((str(v), t) for v, t in witnesses[0]).get(
            str(w.ctx.vars[loop].term), z3.BitVecVal(0, 64)))
        cex = _cex(w, model, layout, q, d, kappa, 0, 1, {name: block})
        w.report(Finding(
            "tag.key-coverage", "error",
            f"key {key} of query row {row} is never accumulated: the loop skips block "
            f"{name}={block}, which holds it, but the mask keeps it (the skipped blocks must "
            f"be exactly the fully masked ones)", st.loop_ops[loop].loc, "for",
            "loop over every block with an unmasked key (causal: up to and including the "
            "diagonal block of the last row)", cex))
    else:
        cex = _cex(w, model, layout, q, d, kappa, 0, 1)
        w.report(Finding(
            "tag.key-coverage", "error",
            f"key {key} of query row {row} is never accumulated, but the mask keeps it",
            contribs[0].loc, "wgmma", "accumulate every key block", cex))
