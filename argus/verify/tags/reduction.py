"""atomic_add: partial sums added into a global tensor (split-K), checked over all adders.

At the op: the destination coordinate check of a store (unless a tag_assert names the
value), and the adder is recorded. Several adders meeting at one element is the intended
reduction, so adds never race with each other; after the walk, over all adds of a tensor:

- tag.store-race: a plain store and an atomic add that reach one element (the result
  depends on which runs last);
- tag.k-coverage, exactly once: two different (adder, k step) pairs never accumulate one
  k below K into one element: two work items (split, tile, warpgroup, thread, register)
  with the same destination element and k, or one with two steps;
- tag.k-coverage, every k: every k in [0, K) reaches every element inside the tensor
  through some adder's non-zero product (the last split's steps past K read TMA zeros and
  count for nothing). "For every element and k there is a work item" is made one
  quantifier-free query with witness terms: the adder's tile and position from the
  element (writers.py), its split and k step from k (witness.py); a model is confirmed
  with the real products before it is reported.
Coverage of the tensor (every element receives some add) is writers.coverage.
"""

from __future__ import annotations

import dataclasses

import z3

from argus.ir.nodes import Op
from argus.verify.finding import Counterexample, ElementTag, Finding
from argus.verify.smt import TIMEOUT_MS, bv, holds, least, solve, value

from . import report, store as stores, witness, writers
from .kcoverage import _chained, steps
from .values import AddRecord, Fragment, GlobalTile, StoreRecord


def atomic_add(w, op: Op) -> None:
    if w.phase != "check":
        return
    dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
    if not (isinstance(dst, GlobalTile) and isinstance(src, Fragment)):
        w.not_modelled(op, "an atomic_add whose tile or value is not known")
        return
    if z3.is_false(z3.simplify(z3.And(*w.path))):
        w.dead_stores.setdefault(dst.tensor, op)    # writers.coverage: if none runs at all
        return
    rec = stores.record(w, op, dst, src.layout, src.shape)
    w.reductions.append(AddRecord(rec, src.tag.copy()))
    inst, bounds, _ = stores._instance(w, src.layout, src.shape)
    stores.tensor_of_origin(w, op, rec, dst, src, inst, bounds)
    if src.tag.state != "data" or id(op.arg("src")) in w.asserted:
        return
    stores.coordinates(w, op, rec, src, inst, bounds, when=nonzero(w, src.tag, inst))


def nonzero(w, tag, inst):
    """Some product added into the element can be non-zero: some step of some contribution
    has both operand elements inside their tensors (loop counters, j and kk free: the
    claims this is used in hold for all of them). An add of zeros changes nothing."""
    kk, jv = w.pos["kk"], w.pos["j"]
    return z3.Or(*[z3.And(inst(ok), z3.ULT(kk, c.kinstr), z3.ULT(jv, len(c.k)))
                   for c in tag.contributions for ok in [_chained(jv, c, w.path)[1]]])


def check(w) -> None:
    tensors = dict.fromkeys(a.store.tensor for a in w.reductions)
    for tensor in tensors:
        adds = [a for a in w.reductions if a.store.tensor == tensor]
        plain = [r for r in w.stores if r.tensor == tensor]
        if _mixed(w, adds, plain):
            continue
        if any(a.tag.state == "unknown" for a in adds):
            continue          # what it adds is not known (reported where it became unknown)
        data = [a for a in adds if a.tag.state == "data" and a.tag.contributions]
        if data and _exactly_once(w, data):
            _every_k(w, data)


def _mixed(w, adds, plain) -> bool:
    """A plain store and an atomic add reaching one element: reported at the store."""
    for p in plain:
        for a in adds:
            inst, _, _ = stores._instance(w, a.store.layout, a.store.shape)
            when = nonzero(w, a.tag, inst) if a.tag.state == "data" else None
            if writers._race(w, a.store, p, when=when, say=lambda e, first, second: (
                    f"{e} is written by this plain store ({second}) while atomic_add at line "
                    f"{a.store.loc.line} adds into it ({first}): the result depends on "
                    f"which runs last"),
                    hint="add every partial sum with atomic_add (into a zeroed tensor), or "
                         "store only where no other work item adds"):
                return True
    return False


def _scope(w, rec: StoreRecord, accumulated=()) -> tuple[str, ...]:
    step_counters = tuple(n for n in w.schedules if n in w.ctx.vars)
    return tuple(dict.fromkeys([*step_counters, *rec.identity, *accumulated]))


def _copy(w, names, suffix):
    return w.ctx.copy_with_products(names, suffix)


def _exactly_once(w, adds: list[AddRecord]) -> bool:
    for i, a in enumerate(adds):
        for b in adds[i:]:
            for ci, c in enumerate(a.tag.contributions):
                for d in (b.tag.contributions[ci:] if a is b else b.tag.contributions):
                    if _twice(w, a, c, b, d):
                        return False
    return True


def _twice(w, a: AddRecord, c, b: AddRecord, d) -> bool:
    """Two (adder, step) pairs accumulating one k below K into one element. Elements are
    named by their positions (pr, pc) in the fragments (a destination is affine in them,
    cheaper for z3 than the thread-value formula); the threads are named afterwards.

    Two lemmas first, each a cheap query: two different adders never reach one element
    (then nothing is added twice); or, for one adder, the element determines the variables
    its destination depends on (tile, position), which the main query then shares between
    the two sides instead of copying: what is left to tell apart is the split and the
    step, which is what exactly-once is about."""
    ra, rb = a.store, b.store
    pr, pc, kk, jv = w.pos["pr"], w.pos["pc"], w.pos["kk"], w.pos["j"]
    names = list(dict.fromkeys([*rb.identity, "pr", "pc", *d.accumulated, "kk", "j"]))
    pairs, related = _copy(w, names, "~")
    cp = lambda x: z3.substitute(x if isinstance(x, z3.BoolRef) else bv(x), *pairs)
    bounds = [z3.ULT(pr, ra.shape[0]), z3.ULT(pc, ra.shape[1]),
              cp(z3.ULT(pr, rb.shape[0])), cp(z3.ULT(pc, rb.shape[1]))]
    one = z3.And(bv(ra.dst[0]) == cp(rb.dst[0]), bv(ra.dst[1]) == cp(rb.dst[1]),
                 stores.inside(bv, ra))
    hyp = [*ra.path, *[cp(p) for p in rb.path], *bounds, *related]
    if a is not b and holds(w.ctx, z3.Not(one), hyp):
        return False                  # they never add into one element
    if a is b:
        ids = {w.ctx.vars[n].term.get_id(): n for n in names}
        placed = [n for n in names if n in ids.values() and any(
            witness._mentions(bv(x), {w.ctx.vars[n].term.get_id()}) for x in ra.dst)]
        same_place = z3.And(*[w.ctx.vars[n].term == y for n, (_, y) in zip(names, pairs)
                              if n in placed])
        # injective whatever the constant offset (a warpgroup's rows): the same lemma for
        # every warpgroup, proved once
        offset = [(w.ctx.vars[n].term, z3.BitVecVal(0, 64)) for n in placed] + \
            [(w.pos[p], z3.BitVecVal(0, 64)) for p in ("pr", "pc")]
        moved = [z3.simplify(bv(x) - z3.substitute(bv(x), *offset)) for x in ra.dst]
        meet = z3.And(moved[0] == cp(moved[0]), moved[1] == cp(moved[1]))
        if placed and holds(w.ctx, z3.Implies(meet, same_place), bounds):
            names = [n for n in names if n not in placed]       # shared, not copied
            pairs, related = _copy(w, names, "~")
            bounds = [z3.ULT(pr, ra.shape[0]), z3.ULT(pc, ra.shape[1])]
            one = stores.inside(bv, ra)
    (k_a, ok_a), (k_b, ok_b) = _chained(jv, c, ra.path), _chained(jv, d, rb.path)
    ka = bv(k_a)
    same = z3.And(one, ka == cp(k_b), z3.ULT(ka, bv(c.axis_extent)), ok_a, cp(ok_b))
    if a is b and c is d:
        differ = z3.Or(*[x != y for x, y in pairs[:len(names)]])
    else:
        differ = z3.BoolVal(True)
    ranges = [z3.ULT(kk, c.kinstr), z3.ULT(jv, len(c.k)), cp(z3.ULT(kk, d.kinstr)),
              cp(z3.ULT(jv, len(d.k))), *related]
    if a is b and c is d and holds(w.ctx, z3.Not(z3.And(
            ka == cp(k_b), z3.ULT(ka, bv(c.axis_extent)), differ)), ranges):
        return False       # even ignoring where the element is: no two steps share a k
    extra = [*ra.path, *[cp(p) for p in rb.path], *bounds, *ranges]
    goal = z3.And(same, differ)
    if holds(w.ctx, z3.Not(goal), extra):
        return False
    scope = _scope(w, ra, c.accumulated)
    model = report.find(w, goal, scope, extra)
    if model is None:
        return False
    second = {}
    if rb.warpgroup is not None:
        second["warpgroup"] = rb.warpgroup
    for n, (_, y) in zip(names, pairs):
        if n not in ("kk", "j", "pr", "pc"):
            second[w.ctx.vars[n].name] = value(model, y)
    held = thread_of(w, rb.layout, (value(model, cp(pr)), value(model, cp(pc))))
    if held:
        second["thread"], second["register"] = rb.thread_base + held[0], held[1]
    idx = (bv(ra.dst[0]), bv(ra.dst[1]))
    k_value = value(model, ka)
    cex = report.counterexample(
        w, model, scope, warpgroup=ra.warpgroup,
        elements=(ElementTag(ra.tensor, tuple(value(model, x) for x in idx),
                             {"k": k_value, "times accumulated": 2,
                              "second adder": second},
                             {"times accumulated": 1}),))
    cex = with_thread(cex, ra, thread_of(w, ra.layout, (value(model, pr), value(model, pc))),
                      (value(model, pr), value(model, pc)))
    where = f"{ra.tensor}[{value(model, idx[0])}, {value(model, idx[1])}]"
    other = ", ".join(f"{k}={v}" for k, v in second.items())
    w.findings.append(Finding(
        "tag.k-coverage", "error",
        f"k = {k_value} is accumulated twice into {where}: by {report.where(cex)} and by "
        f"the adder with {other}", rb.loc, "atomic_add",
        "give each split its own k range: k = ks * KS + kk with KS = cdiv(KT, SPLIT) "
        "k-steps per split, and the same KS in the producer and the consumer", cex))
    return True


def thread_of(w, layout: str, position) -> tuple[int, int] | None:
    """(thread in the warpgroup, register) holding element `position` of a fragment of a
    thread-value layout; None for other layouts."""
    sub = report.thread_vars(w, layout)
    if sub is None:
        return None
    pairs, t, v, bounds = sub
    result, s = solve([*bounds, z3.substitute(bv(w.pos["pr"]), *pairs) == position[0],
                       z3.substitute(bv(w.pos["pc"]), *pairs) == position[1]])
    if result != z3.sat:
        return None
    return value(s.model(), t), value(s.model(), v)


def with_thread(cex, rec: StoreRecord, held, position):
    """The counterexample naming the thread and register that hold the element."""
    if held is None:
        return cex
    thread = rec.thread_base + held[0]
    return dataclasses.replace(cex, thread=thread, register=held[1], warp=thread // 32,
                               lane=thread % 32, layout=rec.layout, cell=tuple(position))


def _every_k(w, adds: list[AddRecord]) -> None:
    ctx = w.ctx
    first = adds[0].store
    e = z3.BitVecs(f"{first.tensor}_row {first.tensor}_col", 64)
    kappa = z3.BitVec("k_missed", 64)
    atoms = witness.atoms_by_id(ctx)
    step_vars = [ctx.vars[n].term for n in (*w.schedules, "block") if n in ctx.vars]
    hits, exact, qvars = [], [], set()
    extent = bv(adds[0].tag.contributions[0].axis_extent)
    for a in adds:
        r = a.store
        pos = [w.pos["pr"], w.pos["pc"]]
        found = writers._witness(w, r, e)
        if found is None:
            return _warn(w, r, "its destination is not affine in its tile coordinates")
        fixed = {str(v) for v, _ in found}
        for c in a.tag.contributions:
            free = [ctx.vars[n].term for n in (*r.identity, *c.accumulated)
                    if str(ctx.vars[n].term) not in fixed] + [w.pos["kk"]]
            owned = [ctx.vars[n].term for n in (*r.identity, *c.accumulated)] + pos + \
                [w.pos["kk"]]
            ids = {v.get_id() for v in owned} | {k for k, (_, x, y) in atoms.items()
                                                 if witness._mentions(bv(x), {v.get_id() for v in owned})
                                                 or witness._mentions(bv(y), {v.get_id() for v in owned})}
            qvars |= ids
            facts = [f for f in ctx.facts if witness._mentions(f, ids)
                     and not any(witness._mentions(f, {s.get_id()}) for s in step_vars)]
            for k_j, ok_j, j_free in steps(w, c, r.path):
                here = z3.And(*facts, *r.path, z3.ULT(pos[0], r.shape[0]),
                              z3.ULT(pos[1], r.shape[1]), r.dst[0] == e[0], r.dst[1] == e[1],
                              ok_j, k_j == kappa, z3.ULT(w.pos["kk"], c.kinstr),
                              z3.ULT(w.pos["j"], len(c.k)))
                exact.append(here)
                k_term = z3.substitute(k_j, *found)
                parts = witness.decompose(k_term, free + j_free, atoms)
                if parts is None:
                    return _warn(w, r, "the k coordinate is not affine in the split and the "
                                       "k-step counters")
                pairs = witness.with_products(ctx, [*found, *witness.euclid(kappa, *parts)])
                hits.append(z3.substitute(here, *pairs))
    outside = [f for f in ctx.facts if not witness._mentions(f, qvars)
               and not any(witness._mentions(f, {s.get_id()}) for s in step_vars)]
    inside_e = [z3.ULT(e[0], bv(first.extents[0])), z3.ULT(e[1], bv(first.extents[1]))]
    below = z3.ULT(kappa, extent)
    if witness.split_proof(outside, inside_e, hits, kappa, below):
        return None
    goal = z3.And(*inside_e, below, z3.Not(z3.Or(*hits)))
    result, s = solve([*outside, goal])
    if result == z3.unsat:
        return None
    if result == z3.sat:
        least(s, [*w.sizes.values(), kappa, *e])
        model = s.model()
        fixed = [t == value(model, t) for t in (*w.sizes.values(), *e, kappa)]
        confirm = z3.Solver()
        confirm.set("timeout", TIMEOUT_MS)
        confirm.add(*ctx.facts, *ctx.product_facts(), *fixed, z3.Or(*exact))
        if confirm.check() == z3.unsat:
            sizes = {n: value(model, t) for n, t in w.sizes.items()}
            idx = (value(model, e[0]), value(model, e[1]))
            k = value(model, kappa)
            cex = Counterexample(sizes=sizes, elements=(ElementTag(
                first.tensor, idx, {"k": k, "times accumulated": 0},
                {"times accumulated": 1}),))
            size_text = ", ".join(f"{n}={v}" for n, v in sizes.items())
            w.findings.append(Finding(
                "tag.k-coverage", "error",
                f"k = {k} is never accumulated into {first.tensor}[{idx[0]}, {idx[1]}] by any "
                f"adder ({size_text}): no split's k range covers it", adds[-1].store.loc,
                "atomic_add", "the splits' k ranges must cover [0, K): KS = cdiv(KT, SPLIT) "
                "k-steps per split (the last one may run past K: TMA reads zeros there)",
                cex))
            return None
    return _warn(w, adds[-1].store, "z3 could not prove that the splits cover every k")


def _warn(w, r: StoreRecord, why: str) -> None:
    w.findings.append(Finding(
        "tag.k-coverage", "warning", f"k coverage over the atomic adds is not verified: {why}",
        r.loc, "atomic_add", "index k tiles by ks * KS + kk with constant or per-split "
        "step counts"))
