"""Races and coverage of stores through segments (one group's rows, segments.py).

A segment store writes row `start(g) + x` of the tensor for its group g (the expert loop's
counter e), x below `rows(g)`, where start and rows are data (sums of routing counts). The
generic checks (writers.py) would ask z3 about all groups at once, with the routing sums
inside every query (unknown after seconds). They are split instead, each part a small
query, and together equivalent to the generic check:

- **other groups never overlap** (races across groups): no row lies in the windows of two
  different group values (a query about the windows only);
- **within a group** the window's start and row count are the same terms for both writers;
  they are replaced by fresh variables S and R (every occurrence, in the facts too), which
  forgets how they are computed: an unsat answer then holds for every start and row count,
  so for the real ones (sound); a sat answer is re-checked on the real terms before it is
  reported. Within the group the destination is `S + (affine in the writer's counters)`,
  and the race and coverage queries are those of a plain tiled store;
- **the groups cover the tensor** (coverage): every row below the tensor's extent is in the
  window of some value of the group counters (enumerated: a short constant loop), and every
  row x < R of a group's window is written (a witness writer by Euclidean division, as in
  writers.py, solving only for the writer's own counters).

A block id that the store's `if` fixes (`if w % BLOCKS == bid`, a filtered persistent
loop) is a function of the other counters: two writers with the same counters are in the
same block, so it is not part of what tells writers apart, and a coverage witness takes
`bid = w % BLOCKS`.
"""

from __future__ import annotations

from itertools import product

import z3

from argus.verify.finding import Counterexample, ElementTag, Finding
from argus.verify.smt import TIMEOUT_MS, WIDTH, bv, integer_unsat, value

from . import abstraction, report, window_families
from argus.verify.integers import key
from .kcoverage import _affine_witness
from .routing import routing_values, values_of
from .segments import in_window


def _mentions(w, expr, var) -> bool:
    return key(var) in _consts(w, expr)


def _consts(w, expr) -> frozenset:
    """The names of the free constants (variables, atoms) of a term (memoised)."""
    return abstraction.install(w.ctx).consts(expr)


def group_vars(w, rec) -> list[str]:
    """The writer counters the segment's window depends on (the group, e.g. e, or the
    block id of `segment(O, bh * SQ, SQ)`, inside the product atom bh * SQ)."""
    cache = w.__dict__.setdefault("segment_groups", {})
    if id(rec) not in cache:
        win = rec.window
        used = _through_atoms(w, bv(win.start)) | _through_atoms(w, bv(win.rows))
        cache[id(rec)] = (rec, [n for n in rec.identity if key(w.ctx.vars[n].term) in used])
    return cache[id(rec)][1]


def _through_atoms(w, t) -> frozenset:
    """The free constants of t and, for each product atom among them, of its factors
    (transitively): what the term's value depends on."""
    memo = w.__dict__.setdefault("_through_atoms", {})
    if memo.get("n") != len(w.ctx.atoms):      # renewed when atoms are added
        memo.clear()
        memo["n"] = len(w.ctx.atoms)
        memo["atoms"] = {key(atom): (a, b) for atom, a, b in w.ctx.atoms.values()}
    got = memo.get(t.get_id())
    if got is not None:
        return got[1]
    atoms = memo["atoms"]
    out, todo = set(), list(_consts(w, t))
    while todo:
        c = todo.pop()
        if c in out:
            continue
        out.add(c)
        if c in atoms:
            for f in atoms[c]:
                todo.extend(_consts(w, bv(f)))
    memo[t.get_id()] = (t, frozenset(out))     # keeps t alive: its id stays its own
    return memo[t.get_id()][1]


def determined(w, rec) -> dict:
    """{block var name: the term its `if` fixes it to} for block ids an equality of the
    path fixes as a function of the writer's other counters."""
    out = {}
    others = {key(w.ctx.vars[n].term) for n in rec.identity if not n.startswith("block_")}
    others |= {key(t) for t in w.sizes.values()}
    atoms = {key(atom) for atom, a, b in w.ctx.atoms.values()
             if _consts(w, bv(a)) | _consts(w, bv(b)) <= others}
    for n in rec.identity:
        if not n.startswith("block_"):
            continue
        var = w.ctx.vars[n].term
        for p in rec.path:
            if not z3.is_eq(p):
                continue
            lhs, rhs = p.children()
            for x, y in ((lhs, rhs), (rhs, lhs)):
                if x.eq(var) and _consts(w, y) <= others | atoms:
                    out[n] = y
    return out


def _abstraction(w, rec, tag: str):
    """Substitution pairs: the window's start and row count -> fresh S, R."""
    win = rec.window
    s = z3.BitVec(f"S{tag}", WIDTH)
    r = z3.BitVec(f"R{tag}", WIDTH)
    pairs = []
    for term, fresh in ((bv(win.start), s), (bv(win.rows), r)):
        if not z3.is_bv_value(z3.simplify(term)):
            pairs.append((term, fresh))
    return pairs, s, r


BOUND = 1 << (WIDTH - 2)


def _kept_bounds(w, pairs) -> list:
    """What the abstraction must not forget: each abstracted term's upper bound (proved in
    intervals of its variables' bounds), when it is far enough below 2^WIDTH that sums
    and tile counts over S and R do not wrap (a start b * SQ over a persistent walk's
    batch b: below 2^48, where 2^32 lost it and let S + x wrap round)."""
    out = []
    for term, fresh in pairs:
        top = abstraction.upper_bound(w.ctx, term)
        if top < BOUND:
            out.append(z3.ULE(fresh, top))
    return out


def _solver(*constraints):
    s = z3.Solver()
    s.set("timeout", TIMEOUT_MS)
    s.add(*constraints)
    return s


def race_goal(w, r, q, same, inside, extra, copies, pos_r):
    """None when r and q (segment stores) never write one element; else the goal (a
    narrowed version of the generic race goal) whose model is a race to report."""
    cp = lambda x: z3.substitute(x if isinstance(x, z3.BoolRef) else bv(x), *copies)
    groups = group_vars(w, r)
    if groups != group_vars(w, q):
        return _generic(w, r, q, same, inside, copies, pos_r)
    fixed_r = determined(w, r)
    ident = [n for n in r.identity if n not in fixed_r]
    terms = [w.ctx.vars[n].term for n in ident] + pos_r
    differ = (z3.Or(*[x != cp(x) for x in terms]) if q is r else z3.BoolVal(True))
    # other groups: the windows never overlap
    gterms = [w.ctx.vars[n].term for n in groups]
    other_group = z3.Or(*[g != cp(g) for g in gterms]) if gterms else z3.BoolVal(False)
    row = z3.BitVec("row#", WIDTH)
    overlap = z3.And(z3.ULT(row, bv(r.extents[0])), other_group, in_window(r, row),
                     cp(in_window(q, row)))
    narrowed = []
    if not _disjoint(w, r, q, gterms) and not abstraction.install(w.ctx).refutes(
            [overlap, *w.ctx.order_facts([overlap])], abstract=False):
        narrowed.append(z3.And(same, inside, other_group))     # report.find decides
    # the same group: abstract the window, the destination is then a plain tiled one
    same_group = [cp(g) == g for g in gterms]
    back = [(cp(g), g) for g in gterms]
    pairs, _, _ = _abstraction(w, r, "#race")
    # the second writer's window in the same group: its copy, the same S and R
    pairs += [(z3.substitute(cp(t), *back), f) for t, f in pairs
              if not z3.substitute(cp(t), *back).eq(t)]
    sub = lambda x: z3.substitute(z3.substitute(x, *back), *pairs) if pairs or back else x
    goal = z3.And(same, differ, inside)
    paths = {p.get_id() for p in [*r.path, *[cp(p) for p in q.path]]}
    unfiltered = [x for x in extra if x.get_id() not in paths]
    kept = _kept_bounds(w, pairs)
    ab = abstraction.install(w.ctx)
    for constraints in (unfiltered, extra):    # the filter of the ifs is seldom needed
        facts = ab.relevant(w.ctx.facts, [goal, *constraints])
        asked = [*[sub(f) for f in facts], *[sub(x) for x in constraints],
                 z3.simplify(sub(goal)), *kept]
        # first with the group's other routing terms (its first m-tile, ...) forgotten
        # too: the same in both writers of one group, they seldom matter
        allowed = ab.allowed()
        if _solver(*[ab.rewrite(x, allowed) for x in asked]).check() == z3.unsat:
            verdict = z3.unsat
            break
        verdict = _solver(*asked).check()
        if verdict == z3.unsat:
            break
    if verdict != z3.unsat:
        narrowed.append(z3.And(goal, *same_group))
    return z3.Or(*narrowed) if narrowed else None


def _disjoint(w, r, q, gterms) -> bool:
    """r's and q's windows are entry g's of one exclusive prefix sum, g their one group
    counter and below the vector's length: two different groups' windows share no row
    (window_families' lemma 2)."""
    if len(gterms) != 1:
        return False
    s, other = (window_families.member_of(w.ctx, x.window.start, x.window.rows, gterms[0])
                for x in (r, q))
    return s is not None and s is other and window_families.below(w.ctx, gterms[0], s.length)


def _generic(w, r, q, same, inside, copies, pos_r):
    cp = lambda x: z3.substitute(x if isinstance(x, z3.BoolRef) else bv(x), *copies)
    terms = [w.ctx.vars[n].term for n in r.identity] + pos_r
    differ = z3.Or(*[x != cp(x) for x in terms]) if q is r else z3.BoolVal(True)
    return z3.And(same, differ, inside)


def coverage(w, tensor, recs) -> None:
    """Every element of `tensor` (written only through segments) is written."""
    ext = recs[0].extents
    row, col = z3.BitVecs(f"{tensor}_row {tensor}_col", WIDTH)
    # 1. the groups' windows cover the rows
    cover, solved = [], []
    for r in recs:
        gnames = group_vars(w, r)
        bounds, short = [], []
        for n in gnames:
            b = w.ctx.small.get(w.ctx.vars[n].term.sexpr())
            if b is not None:
                short.append(n)
                bounds.append(b)
        others = [n for n in gnames if n not in short]
        witness = _solved_groups(w, r, row, others) if others else ([], [], [])
        if witness is None:
            n = others[0]
            _warn(w, r, tensor, f"its group counter {w.ctx.vars[n].name} is neither a "
                                f"short constant loop nor solvable from the row (a block id "
                                f"b of a segment starting at b * rows)")
            return
        pairs_w, facts_w, admitted = witness
        tiled = _tiling(w, r, short, bounds) if not others else None
        if tiled is not None:
            cover.append(z3.ULT(row, tiled))      # the windows of every entry: [0, T)
            continue
        solved += facts_w
        for combo in product(*[range(b) for b in bounds]):
            pairs = [(w.ctx.vars[n].term, z3.BitVecVal(c, WIDTH)) for n, c in zip(short, combo)]
            inside = z3.And(in_window(r, row), *admitted)
            if pairs_w:
                inside = z3.substitute(inside, *pairs_w)
            cover.append(z3.substitute(inside, *pairs) if pairs else inside)
    uncovered = z3.And(z3.ULT(row, bv(ext[0])), *solved, z3.Not(z3.Or(*cover)))
    order = w.ctx.order_facts([uncovered]) if solved else []    # block-indexed windows
    if not abstraction.install(w.ctx).refutes([uncovered, *order], abstract=False):
        m = _model(w, uncovered, [row])
        if m is None:
            _warn(w, recs[-1], tensor, "z3 could not decide whether the segments cover it")
            return
        if m is not abstraction.IMPOSSIBLE:
            sizes = {n: value(m, t) for n, t in w.sizes.items()}
            at = value(m, row)
            cex = Counterexample(sizes=sizes, routing=routing_values(w, m), elements=(
                ElementTag(tensor, (at, 0), {"writers": 0}, {"writers": 1}),))
            w.report(Finding(
                "tag.store-coverage", "error",
                f"{tensor} row {at} lies in no group's segment, so it is never written "
                f"({', '.join(f'{k}={v}' for k, v in sizes.items())})", recs[-1].loc,
                "store", "the segments must cover the tensor: assume that the counts add "
                "up to its rows (assume(element(offs, E - 1) + element(cnt, E - 1) == T)) "
                "and store every group's rows", cex))
            return
    # 2. every row of a group's window is written (once per distinct window)
    done = []
    for r in recs:
        if any(_same_window(r, q) for q in done):
            continue
        done.append(r)
        if not _group_covered(w, r, tensor, recs):
            return


def _tiling(w, r, short, bounds):
    """T when r's windows over its group counter's whole loop are those of every entry of
    an exclusive prefix sum (window_families' lemma 3: together exactly the rows [0, T));
    else None."""
    if len(short) != 1:
        return None
    s = window_families.member_of(w.ctx, r.window.start, r.window.rows,
                                  w.ctx.vars[short[0]].term)
    return s.total if s is not None and bounds[0] == s.length else None


def _solved_groups(w, r, row, names):
    """(pairs, facts, admitted) for group counters that are not short loops (block ids):
    witnesses making the window's start the start of the window holding `row` (Euclidean
    division, witness.solve_exactly), the facts the witnesses satisfy, and what the group
    must satisfy to exist (every fact and condition of the store about them alone, before
    substitution: one that ties them to the writer's other counters is step 2's, which
    finds a writer for every row of every group's window); None when the start is not
    affine in them. A product atom's own facts (Context.definitional) are no condition:
    they hold of every group, and of the witnesses' atoms where the witness facts make
    them the real quotients; left out, they no longer drag every atom over a group counter
    (another window's witnesses among them) and its ordering facts into the query."""
    from .witness import rebuild_atoms, solve_exactly
    terms = [w.ctx.vars[n].term for n in names]
    got = solve_exactly(w.ctx, row, bv(r.window.start), terms)
    if got is None:
        return None
    pairs, facts = got
    ids = {key(t) for t in terms}
    own = {key(w.ctx.vars[n].term) for n in r.identity if n not in names}
    admitted = []
    for f in [*w.ctx.facts, *r.path]:       # every fact about the groups, not only bounds
        if f.get_id() in w.ctx.definitional:
            continue                 # a product atom's meaning: true of every group
        cs = _through_atoms(w, f)
        if not cs & ids:
            continue
        if cs & own:
            continue                 # about its writers too: step 2 finds one per row
        admitted.append(f)
    return rebuild_atoms(w.ctx, pairs), facts, admitted


def _group_covered(w, r, tensor, recs) -> bool:
    x, c = z3.BitVecs(f"{tensor}_x {tensor}_c", WIDTH)
    pairs, S, R = _abstraction(w, r, "#cover")
    ext = r.extents
    witnessed = []
    for q in recs:
        if group_vars(w, q) != group_vars(w, r) or _abstraction(w, q, "#cover")[0] != pairs \
                and not _same_window(r, q):
            continue
        own = _own(w, q, pairs, S, x, c)
        if own is None:
            _warn(w, q, tensor, "the destination is not affine in the writer's counters "
                                "within its segment")
            return False
        witnessed.append(own)
    sub = lambda f: z3.substitute(f, *pairs) if pairs else f
    goal = z3.And(z3.ULT(x, R), z3.ULT(bv(S) + x, bv(ext[0])), z3.ULT(c, bv(ext[1])),
                  z3.Not(z3.Or(*witnessed)))
    facts = [f for f in w.ctx.facts if not _about_writers(w, f, recs)]
    facts = [sub(f) for f in abstraction.install(w.ctx).relevant(facts, [goal])]
    kept = _kept_bounds(w, pairs)
    if integer_unsat(w.ctx, [*facts, *kept], goal):
        return True                  # tiles of 64 * 3 rows: bit-blasted, 5 s; here, ms
    s = _solver(*facts, goal, *kept)
    if s.check() == z3.unsat:
        return True
    # the abstraction forgets what the start and the row count are: ask the real question
    concrete = []
    for q in recs:
        if group_vars(w, q) == group_vars(w, r) and _same_window(r, q):
            concrete.append(_own(w, q, [], bv(r.window.start), x, c))
    start, rows = bv(r.window.start), bv(r.window.rows)
    real = z3.And(z3.ULT(x, rows), z3.ULT(start + x, bv(ext[0])), z3.ULT(c, bv(ext[1])),
                  z3.Not(z3.Or(*concrete)))
    m = _model(w, real, [x, c])
    if m is abstraction.IMPOSSIBLE:
        return True
    if m is None:
        _warn(w, r, tensor, "z3 could not decide whether every row of a segment is written")
        return False
    # the witness writer is one construction: an element no writer at all writes is an error
    pins = _pins(w, m, [])           # the sizes and the routing; any writer of any group
    at_row, at_col = value(m, start + x), value(m, c)
    anyone = z3.Or(*[_exists_writer(w, q, z3.BitVecVal(at_row, WIDTH),
                                    z3.BitVecVal(at_col, WIDTH)) for q in recs])
    if _solver(*w.ctx.facts, *pins, anyone).check() != z3.unsat:
        _warn(w, r, tensor, "no writer of some row of a segment was found, but one may exist")
        return False
    sizes = {n: value(m, t) for n, t in w.sizes.items()}
    groups = {w.ctx.vars[n].name: value(m, w.ctx.vars[n].term) for n in group_vars(w, r)}
    at = (value(m, start + x), value(m, c))
    cex = Counterexample(sizes=sizes, iteration=groups, routing=routing_values(w, m),
                         elements=(ElementTag(tensor, at, {"writers": 0,
                                                           "row in segment": value(m, x)},
                                              {"writers": 1}),))
    w.report(Finding(
        "tag.store-coverage", "error",
        f"{tensor}[{at[0]}, {at[1]}], row {value(m, x)} of the segment of "
        f"{', '.join(f'{k}={v}' for k, v in groups.items())} ({value(m, rows)} rows), is "
        f"never written ({', '.join(f'{k}={v}' for k, v in sizes.items())})",
        r.loc, "store", "the m-tiles of a group must cover its rows: loop over "
        "cdiv(rows, BM) tiles and store each warpgroup's rows", cex))
    return False


def _model(w, goal, first):
    """A minimised model of goal (the facts assumed): abstraction.IMPOSSIBLE when there is
    none, None when undecided."""
    order = [*first, *report.order_of(w, w.scope_vars())]
    m = abstraction.integer_model(w.ctx, goal, order, [])
    if m is not None:
        return m
    from argus.verify.smt import exact_check, first_model
    m = first_model(w.ctx, goal, order, [], exact_only=True)
    if m is not None:
        return m
    return abstraction.IMPOSSIBLE if exact_check(w.ctx, goal) == z3.unsat else None


def _pins(w, m, terms) -> list:
    """terms, the sizes and the routing values fixed to their values in model m."""
    out = [t == value(m, t) for t in [*terms, *w.sizes.values()]]
    for tensor, entries in routing_values(w, m).items():
        f = values_of(w, tensor)
        out += [f(z3.BitVecVal(i, WIDTH)) == v for i, v in entries.items()]
    return out


def _exists_writer(w, q, row, col):
    """Some writer of record q (its counters free) writes element (row, col)."""
    return z3.And(*q.path, z3.ULT(w.pos["pr"], q.shape[0]), z3.ULT(w.pos["pc"], q.shape[1]),
                  bv(q.dst[0]) == row, bv(q.dst[1]) == col, in_window(q, q.dst[0]))


def _same_window(r, q) -> bool:
    return bv(r.window.start).eq(bv(q.window.start)) and bv(r.window.rows).eq(bv(q.window.rows))


def _about_writers(w, f, recs) -> bool:
    """Facts about the writers' own counters are part of each writer's `own` formula."""
    memo = w.__dict__.setdefault("_writer_keys", {})
    ident = tuple(id(r) for r in recs)
    if ident not in memo:
        names = {n for r in recs for n in r.identity if n not in group_vars(w, r)}
        names |= {"pr", "pc"}
        memo[ident] = (recs, frozenset(key(w.ctx.vars[n].term) for n in names
                                       if n in w.ctx.vars))    # recs kept: ids stay theirs
    return not memo[ident][1].isdisjoint(_consts(w, f))


def _own(w, q, pairs, S, x, c):
    """q writes row S + x, column c of its group (a witness writer substituted), or None."""
    sub = lambda f: z3.substitute(f, *pairs) if pairs else f
    groups = set(group_vars(w, q))
    fixed = determined(w, q)
    solve = [n for n in q.identity if n not in groups and n not in fixed]
    pos = ["pr", "pc"]
    rel = z3.simplify(sub(bv(q.dst[0])) - bv(S))
    names0 = [n for n in [*solve, *pos] if _mentions(w, rel, w.ctx.vars[n].term)]
    names1 = [n for n in [*solve, *pos] if _mentions(w, bv(q.dst[1]), w.ctx.vars[n].term)]
    if set(names0) & set(names1):
        return None
    p0 = _affine_witness(w, rel, names0, x) if names0 else []
    p1 = _affine_witness(w, bv(q.dst[1]), names1, c) if names1 else []
    if p0 is None or p1 is None:
        return None
    unsolved = [n for n in solve if n not in names0 and n not in names1]
    pairs_w = p0 + p1 + [(w.ctx.vars[n].term, z3.BitVecVal(0, WIDTH)) for n in unsolved]
    path = [p for p in q.path if not any(z3.is_eq(p) and any(
        a.eq(w.ctx.vars[n].term) for a in p.children()) for n in fixed)]
    # facts about the counters of loops the store is not in (the key loop's j, whose bound
    # depends on the block id when causal) say nothing of whether it runs: without them
    # (else the counter, free here, is the solver's to pick against the witness)
    from .store import scope_of
    scope = set(q.identity) | set(scope_of(w, q))
    elsewhere = frozenset(key(v.term) for n, v in w.ctx.vars.items()
                          if v.kind in ("iteration", "tile") and n not in scope)
    facts = [f for f in w.ctx.facts if _about_writers(w, f, [q])
             and elsewhere.isdisjoint(_consts(w, f))]
    atoms = {key(a) for a, _, _ in w.ctx.atoms.values()}
    body = z3.And(*[sub(p) for p in path], z3.ULT(w.pos["pr"], q.shape[0]),
                  z3.ULT(w.pos["pc"], q.shape[1]), rel == x, sub(bv(q.dst[1])) == c)
    used = _consts(w, body)
    facts = [sub(f) for f in facts if not (_consts(w, f) & atoms) or (_consts(w, f) & atoms) <= used]
    fixed_pairs = [(w.ctx.vars[n].term, t) for n, t in fixed.items()]
    if fixed_pairs:
        # the bounds of a block id fixed to `w % BLOCKS` hold by themselves
        facts = [g for g in (z3.substitute(f, *fixed_pairs) for f in facts)
                 if not _obvious(w, g)]
        body = z3.substitute(body, *fixed_pairs)
    own = z3.And(*facts, body)
    return z3.substitute(own, *pairs_w) if pairs_w else own


def _obvious(w, fact) -> bool:
    """x < c where the intervals of x's variables already put x below c."""
    if not z3.is_app_of(fact, z3.Z3_OP_ULT):
        return False
    x, c = fact.children()
    return z3.is_bv_value(c) and abstraction.upper_bound(w.ctx, x) < c.as_long()


def _warn(w, rec, tensor, why) -> None:
    w.report(Finding("tag.store-coverage", "warning",
                     f"could not prove that every element of {tensor} is written: {why}",
                     rec.loc, "store", "store through segment(Y, first, rows) tiles whose "
                     "coordinates are affine in the loop counters"))
