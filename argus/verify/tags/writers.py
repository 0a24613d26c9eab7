"""The writers of a tensor against each other: no two write one element (races), and
every element is written by one (coverage)."""

from __future__ import annotations

import z3

from argus.verify.finding import Counterexample, ElementTag, Finding
from argus.verify.smt import TIMEOUT_MS, bv, holds, least, mentions, solve, value

from . import cluster, report, segments, segstores, symmetric
from .report import Undecided
from .store import _instance, scope_of
from .values import StoreRecord
from .witness import with_products


def races(w) -> None:
    """No two writers (distinct identity, warpgroup or element) write one element."""
    for i, r in enumerate(w.stores):
        for q in w.stores[i:]:
            if q.tensor != r.tensor:
                continue
            if _race(w, r, q):
                return


def _race(w, r: StoreRecord, q: StoreRecord, say=None, hint=None, when=None) -> bool:
    """Report (at q) an element that r and q both write (where `when`, a condition over
    r's instantiated variables, holds); `say(element, first, second)` and `hint` replace
    the message and hint of a plain double write."""
    inst_r, b_r, thr = _instance(w, r.layout, r.shape)
    inst_q, b_q, _ = _instance(w, q.layout, q.shape)
    names = list(dict.fromkeys([*q.identity, *scope_of(w, q), *_pos_names(w, q.layout)]))
    # the second writer's copies of its variables and of the product atoms over them (a
    # segment start bh * SQ is the atom's copy bh~ * SQ there, not the same atom)
    copies, related = w.ctx.copy_with_products(names, "~")
    cp = lambda x: z3.substitute(x if isinstance(x, z3.BoolRef) else bv(x), *copies)
    same = z3.And(inst_r(r.dst[0]) == cp(inst_q(q.dst[0])),
                  inst_r(r.dst[1]) == cp(inst_q(q.dst[1])))
    if q is r:
        ident = [w.ctx.vars[n].term for n in [*r.identity, *_pos_names(w, r.layout)]]
        differ = z3.Or(*[x != cp(x) for x in ident]) if ident else z3.BoolVal(False)
    else:
        differ = z3.BoolVal(True)     # two store ops (or warpgroups): any overlap
    extra = [*r.path, *[cp(p) for p in q.path], *b_r, *[cp(b) for b in b_q], *related]
    inside = z3.And(z3.ULT(inst_r(r.dst[0]), bv(r.extents[0])),   # the store drops the rest
                    z3.ULT(inst_r(r.dst[1]), bv(r.extents[1])),
                    segments.in_window(r, inst_r(r.dst[0])),       # and rows past a segment
                    cp(segments.in_window(q, inst_q(q.dst[0]))))
    if q is r and r.window is None and \
            _injective(w, r, inst_r, cp, differ, [*b_r, *[cp(b) for b in b_q]]):
        return False                     # (segment stores: segstores.race_goal below)
    goal = z3.And(same, differ, inside, *([when] if when is not None else []))
    if r.window is not None and q.window is not None and when is None:   # segment stores
        pos = [w.ctx.vars[n].term for n in _pos_names(w, r.layout)]
        goal = segstores.race_goal(w, r, q, same, inside, extra, copies, pos)
        if goal is None:
            return False
    else:
        verdict = solve([*w.ctx.facts, *extra, goal], solver=False)[0]
        if verdict == z3.unknown:
            raise Undecided(f"whether two stores to {r.tensor} can write one element")
        if verdict != z3.sat:
            return False
    scope = tuple(n for n in w.ctx.vars if w.ctx.vars[n].kind in ("tile", "iteration")
                  and n in (*r.identity, *scope_of(w, r)))
    # the warpgroups first (a few values each): pinned, the searches after them are the
    # per-warpgroup walks' (symmetric.py)
    wgs = [w.ctx.vars[n].term for n in r.identity if w.ctx.vars[n].kind == "warpgroup"]
    model = report.find(w, goal, scope, extra,
                        minimise_first=[*wgs, *[cp(t) for t in wgs]])
    if model is None:
        return False
    idx = (inst_r(r.dst[0]), inst_r(r.dst[1]))
    other = {}
    if "t" in w.ctx.vars:
        other = {"thread": value(model, cp(bv(q.thread_base)))
                 + value(model, cp(w.ctx.vars["t"].term))}
        if "v" in w.ctx.vars:
            other["register"] = value(model, cp(w.ctx.vars["v"].term))
    variables = {v.term.get_id(): v for v in w.ctx.vars.values()}
    for n, c in copies:
        var = variables.get(n.get_id())
        if var is None or var.kind == "warpgroup":
            continue                     # a product atom's copy (not a coordinate), or wg
        name = var.name
        if name in ("t", "v", "pr", "pc"):
            continue
        other[name] = value(model, c)
    if q.warpgroup is not None:          # symbolic when one walk stood for every warpgroup
        other["warpgroup"] = value(model, cp(bv(q.warpgroup)))
    cex = report.counterexample(w, model, scope, layout=r.layout, warpgroup=r.warpgroup,
                                thread_base=r.thread_base,
                                elements=(ElementTag(r.tensor, tuple(value(model, x) for x in idx),
                                                     {"second writer": other},
                                                     {"writers": 1}),))
    where = report.where(cex)
    second = ", ".join(f"{k} {v}" for k, v in other.items())
    element = f"{r.tensor}[{value(model, idx[0])}, {value(model, idx[1])}]"
    if hint is None and any(n.startswith("issuer") for n in q.identity):
        hint = ("issue the TMA store from one thread: put it inside `with elect_one():` "
                "(and only in one warpgroup)")
    message = (say(element, where, second) if say else
               f"{element} is written twice: by {where} and by {second}")
    w.report(Finding("tag.store-race", "error", message, q.loc,
                     "tma_store" if q.layout == "tma.box" else "store",
                     hint or "give each warpgroup and tile its own rows: include the "
                     "warpgroup index in the destination tile coordinate", cex))
    return True


def _injective(w, r: StoreRecord, inst, cp, differ, bounds) -> bool:
    """One writer's destination never meets itself: proved without its constant offset
    (a warpgroup's rows), its path or the tensor's bounds (a stronger claim, so the same
    one for every warpgroup, proved once); False when that does not go through."""
    names = [n for n in r.identity if n in w.ctx.vars]
    zero = [(w.ctx.vars[n].term, z3.BitVecVal(0, 64)) for n in names] + \
        [(w.pos[p], z3.BitVecVal(0, 64)) for p in ("pr", "pc")]
    moved = [z3.simplify(bv(x) - z3.substitute(bv(x), *zero)) for x in r.dst]
    meet = z3.And(inst(moved[0]) == cp(inst(moved[0])), inst(moved[1]) == cp(inst(moved[1])))
    return holds(w.ctx, z3.Not(z3.And(meet, differ)), bounds)


def _pos_names(w, layout):
    if report.tv_atom(layout) is not None:
        return ["t", "v"]
    return ["pr", "pc"]


def coverage(w) -> None:
    """Every element of every stored tensor is written by some writer.

    "For every element there is a writer" is a quantifier alternation z3 does not decide
    here (unknown after seconds), so a writer is constructed: the destination of a store
    is affine in its identity variables and positions, and a witness for element e is
    found by Euclidean division by the coefficients, largest first. The quantifier-free
    query "some element in the tensor has no witness writer" is then asked; unsat proves
    coverage. A model is confirmed (no writer at all for that element, with those sizes)
    before it is reported; otherwise coverage is reported as not proved (a warning)."""
    by_tensor: dict[str, list[StoreRecord]] = {}
    for r in [*w.stores, *(a.store for a in w.reductions)]:
        by_tensor.setdefault(r.tensor, []).append(r)
    for tensor, op in w.dead_stores.items():
        if tensor not in by_tensor:       # stored to in the source, but by no warpgroup
            w.report(Finding(
                "tag.store-coverage", "error",
                f"{tensor} is never written: its store at line {op.loc.line} sits under a "
                "condition that no warpgroup of any block satisfies", op.loc,
                op.opcode.replace(".", "_"), "check the condition around the store (e.g. "
                "`if wg == 0:` for the warpgroup that issues it)"))
    for tensor, recs in by_tensor.items():
        if all(r.window is not None for r in recs):
            segstores.coverage(w, tensor, recs)
        else:
            _cover(w, tensor, recs)


def _cover(w, tensor, recs) -> None:
    ext = recs[0].extents
    e = z3.BitVecs(f"{tensor}_row {tensor}_col", 64)
    steps = [w.ctx.vars[n].term for n in (*w.schedules, "block", "cluster") if n in w.ctx.vars]
    qnames = sorted({n for r in recs for n in (*r.identity, "pr", "pc")})
    qvars = [w.ctx.vars[n].term for n in qnames]
    # a fact tying a writer's variable to a counter no writer is told apart by (the bound
    # of a loop around no store, whose trip count depends on the block id) says nothing
    # about which element is written
    known = {str(q) for q in qvars} | {str(t) for t in w.sizes.values()}
    known |= _atoms(w, known)
    inside, outside = [], []
    for f in w.ctx.facts:
        if any(_mentions(f, s) for s in steps):
            continue
        if any(_mentions(f, q) for q in qvars) and not _constants(f) <= known:
            continue
        (inside if any(_mentions(f, q) for q in qvars) else outside).append(f)
    witnessed, exact = [], []
    for r in recs:
        own = z3.And(*inside, *r.path, z3.ULT(w.pos["pr"], r.shape[0]),
                     z3.ULT(w.pos["pc"], r.shape[1]), r.dst[0] == e[0], r.dst[1] == e[1],
                     segments.in_window(r, r.dst[0]))
        exact.append(own)
        # the cluster rank and a symbolic warpgroup index (symmetric.py): enumerated, so
        # that two writer variables of one coefficient (bx + wg) do not hide a writer
        for ranked in _enumerated(w, r):
            pairs = _witness(w, cluster.fixed(r, ranked), e)
            if pairs is not None:       # a writer variable the destination ignores: take 0
                pairs = ranked + pairs
                named = {str(v) for v, _ in pairs}
                pairs += [(q, z3.BitVecVal(0, 64)) for q in qvars if str(q) not in named]
                pairs = with_products(w.ctx, pairs)     # no product atom left free
            if pairs is None:
                w.report(Finding("tag.store-coverage", "warning",
                                 f"the destination of this store is not affine in its tile "
                                 f"coordinates; coverage of {tensor} not verified", r.loc,
                                 "store", "write destinations as tile(C, box, coords) with "
                                 "affine coords"))
                return
            witnessed.append(z3.substitute(own, *pairs))
    bounds = [z3.ULT(e[0], bv(ext[0])), z3.ULT(e[1], bv(ext[1]))]
    result, s = solve([*outside, *bounds, z3.Not(z3.Or(*witnessed))])
    if result == z3.unsat:
        return
    if result == z3.sat:
        model = _minimise(s, [*w.sizes.values(), *e])
        fixed = [t == value(model, t) for t in (*w.sizes.values(), *e)]
        confirm = z3.Solver()
        confirm.set("timeout", TIMEOUT_MS)
        confirm.add(*outside, *fixed, z3.Or(*exact))
        if confirm.check() == z3.unsat:
            row, col = value(model, e[0]), value(model, e[1])
            sizes = {n: value(model, t) for n, t in w.sizes.items()}
            size_text = ", ".join(f"{n}={v}" for n, v in sizes.items())
            cex = Counterexample(sizes=sizes, elements=(
                ElementTag(tensor, (row, col), {"writers": 0}, {"writers": 1}),))
            w.report(Finding("tag.store-coverage", "error",
                             f"{tensor}[{row}, {col}] is never written ({size_text})",
                             recs[-1].loc, "store",
                             "cover the whole tensor: assume the sizes are multiples of the "
                             "tile (assume(M % BM == 0)) or add a tail tile", cex))
            return
    w.report(Finding("tag.store-coverage", "warning",
                     f"could not prove that every element of {tensor} is written", recs[-1].loc,
                     "store", "write destinations as tile(C, box, coords) with affine coords"))


def _enumerated(w, r: StoreRecord) -> list[list]:
    """The writer variables a coverage witness tries every value of: the cluster rank
    (cluster.witness_choices) and the warpgroup index of a role walked once for all its
    warpgroups, each combination a substitution list."""
    return [[*ranked, *wg] for ranked in cluster.witness_choices(w, r)
            for wg in symmetric.per_warpgroup(w, list(r.dst))]


def _witness(w, r: StoreRecord, e):
    """Substitution pairs (variable, witness term) making r write element e, or None."""
    pairs, used = [], set()
    solvable = {w.ctx.vars[n].term.sexpr() for n in (*r.identity, "pr", "pc")
                if n in w.ctx.vars}
    rank = {w.ctx.vars[n].term.sexpr(): i for i, n in enumerate(r.identity) if n in w.ctx.vars}
    for axis in (0, 1):
        terms = _affine(z3.simplify(r.dst[axis]), solvable)
        if terms is None:
            return None
        const = terms.pop(None, 0)
        rest = e[axis] - const
        # larger strides first; between equal ones the outer loop's variable first (a tile
        # coordinate before the counter of a loop inside the tile, which may run once)
        for var_id, (coeff, var) in sorted(terms.items(),
                                           key=lambda kv: (-kv[1][0], rank.get(kv[0], 99))):
            if var_id in used:
                return None
            used.add(var_id)
            pairs.append((var, z3.UDiv(rest, coeff)))
            rest = z3.URem(rest, coeff)
    return pairs


def _affine(t, solvable=None):
    """{var sexpr: (coeff, var)} plus {None: const} for a sum of constant multiples of
    variables, else None. With `solvable` (the sexprs of the writer's own variables), a
    subterm that uses none of them is part of the constant (a term: T // 64 * 64)."""
    if z3.is_bv_value(t):
        return {None: t.as_long()}
    if z3.is_const(t) and (solvable is None or t.sexpr() in solvable):
        return {t.sexpr(): (1, t)}
    if solvable is not None and not _uses(t, solvable):
        return {None: t}
    if z3.is_app_of(t, z3.Z3_OP_BADD):
        out = {}
        for c in t.children():
            part = _affine(c, solvable)
            if part is None:
                return None
            for k, v in part.items():
                if k is None:
                    out[None] = out.get(None, 0) + v
                elif k in out:
                    out[k] = (out[k][0] + v[0], v[1])
                else:
                    out[k] = v
        return out
    if z3.is_app_of(t, z3.Z3_OP_BMUL) and len(t.children()) == 2:
        a, b = t.children()
        if z3.is_bv_value(b):
            a, b = b, a
        if z3.is_bv_value(a):
            part = _affine(b, solvable)
            if part is None:
                return None
            k = a.as_long()
            return {key: (v * k if key is None else (v[0] * k, v[1])) for key, v in part.items()}
    return None


def _minimise(s, order):
    least(s, order)
    return s.model()


def _mentions(expr, var) -> bool:
    return mentions(expr, {var.get_id()})


def _constants(expr) -> set[str]:
    if z3.is_const(expr) and not z3.is_bv_value(expr) and not z3.is_true(expr) \
            and not z3.is_false(expr):
        return {str(expr)}
    out: set[str] = set()
    for c in expr.children():
        out |= _constants(c)
    return out


def _atoms(w, known: set[str]) -> set[str]:
    """Product atoms of known terms (they stand for a product of writer variables)."""
    return {str(atom) for atom, a, b in w.ctx.atoms.values()
            if _constants(a) <= known and _constants(b) <= known}


def _uses(t, names: set, seen=None) -> bool:
    """Does t mention a variable whose sexpr is in `names`?"""
    seen = set() if seen is None else seen
    if t.get_id() in seen:
        return False
    seen.add(t.get_id())
    if z3.is_const(t):
        return t.sexpr() in names
    return any(_uses(c, names, seen) for c in t.children())
