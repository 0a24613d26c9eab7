"""A fast first attempt at every tag query of a kernel with routing data: abstract the
routing sums.

The start and row count of an expert's segment are sums of uninterpreted routing values
(`counts(0) + counts(1) + ...`, selected by the expert counter through an if-then-else
chain). Most checks do not depend on what these sums are: the same sum appears on both
sides (the accumulator row and the destination row are both `start(e) + ...`). Bit-blasted,
each sum is still a 64-bit adder chain, and z3 needs seconds per query.

So before the real query, every maximal subterm built from routing values, sizes and the
counters of short constant loops (the expert counter) is replaced by one fresh variable,
the same subterm by the same variable, in the claim and in every fact. That forgets what
the subterms are, which only adds models: when the abstracted query proves the claim, the
claim holds (sound); when it does not, the real query decides (smt.holds). Checks whose
truth depends on the routing arithmetic itself (the routed expert, segments that cover
the tensor) reason in integers instead (integers.py).
"""

from __future__ import annotations

import z3

from argus.verify import integer_models, integers, termscan
from argus.verify.integer_models import exact_check
from argus.verify.integers import key
from argus.verify.least import least_value
from argus.verify.smt import TIMEOUT_MS, relevant


class Abstraction:
    def __init__(self, ctx):
        self.ctx = ctx
        self._info: dict[int, tuple] = {}      # ast id -> (has routing value, free consts)
        self._fresh: dict[int, object] = {}    # ast id -> its fresh variable
        self._facts: dict[int, object] = {}    # fact id -> abstracted fact
        self._allowed = frozenset()
        self._proved: dict[tuple, tuple] = {}     # (claim, extra, #facts) -> result
        self.path = lambda: ()                     # the walker's current if conditions
        self._fact_index = None
        self._quick_misses = 0                     # integer first attempts in a row that failed

    def allowed(self) -> set:
        names = {key(v.term) for v in self.ctx.vars.values()
                 if v.kind == "size" or v.term.sexpr() in self.ctx.small}
        return frozenset(names)

    def _scan(self, t):
        """(applies a routing value, the names of its free constants) of t (memoised)."""
        ident = t.get_id()
        got = self._info.get(ident)
        if got is not None:
            return got[1]
        found = termscan.scan(t)
        info = (found.routed, termscan.names(t))
        self._info[ident] = (t, info)        # keeps t alive: z3 reuses the ids of freed terms
        return info

    def consts(self, t) -> frozenset:
        """The names of the free constants (variables, atoms) of t (memoised)."""
        return self._scan(t)[1]

    def mentions(self, t, var) -> bool:
        return key(var) in self._scan(t)[1]

    def rewrite(self, t, allowed):
        """t with its maximal routing subterms replaced by fresh variables."""
        pairs = []
        seen = set()

        def visit(x):
            if x.get_id() in seen:
                return
            seen.add(x.get_id())
            routed, consts = self._scan(x)
            if not routed:
                return
            if z3.is_bv(x) and consts <= allowed:
                got = self._fresh.get(x.get_id())
                fresh = got[1] if got is not None else None
                if fresh is None:
                    fresh = z3.BitVec(f"routing#{len(self._fresh)}", x.size())
                    self._fresh[x.get_id()] = (x, fresh)
                pairs.append((x, fresh))
                return
            for c in x.children():
                visit(c)
        visit(t)
        return z3.substitute(t, *pairs) if pairs else t

    def relevant(self, facts, terms) -> list:
        """The facts connected to `terms` through shared constants (the cone of influence):
        the others constrain only variables the query does not mention, so leaving them
        out changes nothing. A product atom's facts come in only when the query names the
        atom (they would connect every query to the loops of the persistent schedule)."""
        index = self._index(facts)
        wanted = set()
        for t in terms:
            wanted |= self.consts(t)
        chosen = set(index["free"])                 # facts about no variable at all
        frontier = list(wanted)
        while frontier:
            name = frontier.pop()
            for i in index["by_const"].get(name, ()):
                if i in chosen:
                    continue
                cs = index["consts"][i]
                if not (cs & index["atoms"]) <= wanted:
                    continue
                chosen.add(i)
                for c in cs - wanted:
                    wanted.add(c)
                    frontier.append(c)
        # an atom wanted later admits the facts that waited for it
        grown = True
        while grown:
            grown = False
            for i, cs in enumerate(index["consts"]):
                if i not in chosen and cs & wanted and (cs & index["atoms"]) <= wanted:
                    chosen.add(i)
                    new = cs - wanted
                    wanted |= new
                    grown = grown or bool(new)
        return [facts[i] for i in sorted(chosen)]

    def _index(self, facts) -> dict:
        """Per fact its constants, and per constant its facts (renewed as facts grow)."""
        got = self._fact_index
        if got is not None and got["n"] == len(facts) and got["facts"] is facts:
            return got
        atoms = {key(a) for a, _, _ in self.ctx.atoms.values()}
        consts = [self.consts(f) for f in facts]
        by_const: dict = {}
        for i, cs in enumerate(consts):
            for c in cs:
                by_const.setdefault(c, []).append(i)
        self._fact_index = {"n": len(facts), "facts": facts, "consts": consts,
                            "by_const": by_const, "atoms": atoms,
                            "free": [i for i, cs in enumerate(consts) if not cs]}
        return self._fact_index

    def proves(self, claim, extra) -> bool:
        extra = list(extra)
        ident = (claim.get_id(), *[x.get_id() for x in extra], len(self.ctx.facts))
        got = self._proved.get(ident)
        if got is None:
            got = (claim, extra, self.refutes([*extra, z3.Not(claim)]))
            self._proved[ident] = got
        return got[2]

    def refutes(self, constraints, abstract: bool = True) -> bool:
        """Is the conjunction of `constraints` (with the facts) impossible? Tried with the
        routing sums abstracted (bit-vectors), then exactly in integers; False when
        neither shows it (the caller then asks the real query). `abstract=False` skips
        the first attempt (for claims about the routing arithmetic itself)."""
        if not abstract:
            return self._in_integers(constraints)
        # most queries do not need the filter of the ifs around them (the persistent
        # loop's `w % BLOCKS == bid`, a remainder of a product: costly to bit-blast), and
        # what is impossible without a constraint is impossible with it
        path = {p.get_id() for p in self.path()}
        unfiltered = [x for x in constraints if x.get_id() not in path]
        if len(unfiltered) < len(constraints) and self._abstracted(unfiltered):
            return True
        return self._abstracted(constraints) or self._in_integers(constraints)

    def _abstracted(self, constraints) -> bool:
        allowed = self.allowed()
        if allowed != self._allowed:
            self._allowed, self._facts = allowed, {}
        facts = []
        for f in self.relevant(self.ctx.facts, constraints):
            ident = f.get_id()
            if ident not in self._facts:
                self._facts[ident] = (f, self.rewrite(f, allowed))
            facts.append(self._facts[ident][1])
        asked = [self.rewrite(x, allowed) for x in constraints]
        if self._quick_misses < QUICK_MISSES and any(_by_constant(x) for x in asked):
            # a division by a constant that is no power of two (P // 6: a slot's choice) is
            # costly to bit-blast and exact in integers: there first, briefly; given up for
            # the kernel after a few misses in a row (a persistent walk's w % 132 in every
            # query of a grouped GEMM: its translation cost 0.4 s and proved nothing)
            try:
                if integers.check(facts, z3.And(*asked), timeout_ms=QUICK_MS) == z3.unsat:
                    self._quick_misses = 0
                    return True
            except integers.Untranslatable:
                pass
            self._quick_misses += 1
        s = z3.Solver()
        s.set("timeout", TIMEOUT_MS)
        s.add(*facts, *asked)
        return s.check() == z3.unsat

    def _in_integers(self, constraints) -> bool:
        """The real query (nothing abstracted), in integer arithmetic when it translates."""
        own = _bounded(constraints, integers.translator_of(self.ctx).bounds)
        try:
            return integers.unsat_in(self.ctx, self.relevant(self.ctx.facts, constraints),
                                     z3.And(*constraints), own)
        except integers.Untranslatable:
            return False


QUICK_MS = 300      # the integer attempt before a bit-blasted query with a division
QUICK_MISSES = 3    # failed attempts in a row after which a kernel's queries skip it


def _by_constant(t) -> bool:
    """t divides by a constant that is no power of two (x // 6, x % 6)."""
    found = termscan.scan(t)
    if found.remainders:
        return True
    return any(z3.is_bv_value((q if q is not None else r).arg(1))
               for q, r in found.divisions.values())


def install(ctx) -> "Abstraction":
    """Make smt.holds try the abstraction first for this context (idempotent)."""
    if getattr(ctx, "abstraction", None) is None:
        ctx.abstraction = Abstraction(ctx)
    return ctx.abstraction


def refuted(ctx, constraints) -> bool:
    """Shown impossible by the fast attempts (only for contexts with routing data)."""
    return ctx.abstraction is not None and ctx.abstraction.refutes(list(constraints))


def confirmed_model(ctx, constraints):
    """A model of the facts and `constraints` found in integers and confirmed in the
    bit-vectors with the real products (integer_models.decide), or None (no routing data,
    nothing found, or not confirmed). With one, an attempt to prove the constraints
    impossible is bound to fail, and the caller can go straight to its counterexample."""
    if ctx.abstraction is None:
        return None
    facts = relevant(ctx.facts, constraints)
    return integer_models.decide(ctx, facts, z3.And(*constraints))[1]


def upper_bound(ctx, term) -> int:
    """An upper bound of `term`'s value from the bounds of its variables (intervals)."""
    try:
        return integers.translator_of(ctx)._get(term)[1]
    except integers.Untranslatable:
        return 2 ** term.size() - 1


def _bounded(constraints, known) -> dict:
    """Bounds `x < c` that the query itself puts on variables the facts do not bound."""
    out = {}
    for c in constraints:
        if z3.is_app_of(c, z3.Z3_OP_ULT):
            x, limit = c.children()
            if z3.is_const(x) and not z3.is_bv_value(x) and z3.is_bv_value(limit) \
                    and key(x) not in known and limit.as_long() > 0:
                out[key(x)] = limit.as_long() - 1
    return out


IMPOSSIBLE = "impossible"


def integer_model(ctx, goal, order, extra, minimise: bool = True):
    """A minimised model of facts & extra & goal found in integers and carried back to the
    bit-vectors (every variable and routing value pinned, the products given their
    meaning), for counterexamples of routing terms the bit-vector solver is slow on.
    Every model of the search gives the product atoms their products (true instances
    asserted as models need them, integer_models.exact_check), so the minimum is that of
    the real query, which the pinned bit-vector check then confirms. IMPOSSIBLE when the
    (exact) integer query is unsat with the atoms free; None when it cannot be used (a
    fact or the goal does not translate, the products do not settle, or the pinned
    bit-vector query fails)."""
    tr = integers.Translator(integers.bounds_of(ctx))
    try:
        facts = [tr.term(f) for f in ctx.facts]
        rest = [tr.term(x) for x in extra] + [tr.term(goal)]
        products = [(tr.term(atom), tr.term(a), tr.term(b))
                    for atom, a, b in termscan.products_reached(ctx.atoms, [*extra, goal])]
    except integers.Untranslatable:
        return None
    s = z3.SimpleSolver()             # the incremental core from the first check: its
    s.set("timeout", TIMEOUT_MS)      # probes are all incremental, and the tactics
    s.add(*tr.ranges, *facts, *rest)  # before a first check cost seconds on some queries
    verdict = s.check()
    if verdict == z3.unsat:
        return IMPOSSIBLE
    if verdict != z3.sat or exact_check(s, products, checked=True)[0] != z3.sat:
        return None
    atoms = {key(a) for a, _, _ in ctx.atoms.values()}
    targets = []
    for t in order:
        try:
            targets.append(tr.term(t))
        except integers.Untranslatable:
            continue
    pinned, m = _least_int(s, targets, products, s.model())
    # then the routing values (counts, ids), smallest first: a small routing to replay,
    # asked of the query with the values pinned so far put in (the if-then-else chains
    # over the expert counter and the sizes fold away: each probe a fraction of the cost)
    if minimise:
        _, m = _least_int(_substituted(s, pinned), [i for b, i in tr.leaves
                                                  if not z3.is_const(b) and key(b) not in atoms],
                          products, m)
    pins = [bv_leaf == m.eval(int_leaf, model_completion=True).as_long()
            for bv_leaf, int_leaf in tr.leaves if key(bv_leaf) not in atoms]
    b = z3.Solver()
    b.set("timeout", TIMEOUT_MS)
    b.add(*ctx.facts, *extra, goal, *ctx.product_facts(), *pins)
    return b.model() if b.check() == z3.sat else None


def _least_int(s, terms, products, model) -> tuple:
    """Pin each integer term in turn to its least value in a model that gives the product
    atoms their products (`model`, one of s); returns the (term, value) pins and such a
    model of them all. The model of the last satisfiable probe satisfies every pin so far
    and gives the term the least value found (least_value moves to a probe's value only
    when it is sat), so it gives the next term's starting value, and the answer, without
    another check."""
    def probe(t, bound):
        nonlocal model
        s.push()
        s.add(t <= bound)
        verdict, added = exact_check(s, products)
        found = None
        if verdict == z3.sat:
            model = s.model()
            found = model.eval(t, model_completion=True).as_long()
        s.pop()
        s.add(*added)                # true facts: kept outside the probe's scope
        return found

    pinned = []
    for t in terms:
        start = model.eval(t, model_completion=True).as_long()
        pinned.append((t, least_value(lambda bound: probe(t, bound), start)))
        s = _substituted(s, pinned[-1:])
    return pinned, model


def _substituted(s, pinned):
    """A fresh solver of s's assertions with the pinned terms replaced by their values
    (and the pins themselves, so models still give them): the same models, a smaller
    query."""
    values = [(t, z3.IntVal(v)) for t, v in pinned]
    out = z3.SimpleSolver()
    out.set("timeout", TIMEOUT_MS)
    out.add(*[z3.simplify(z3.substitute(a, *values)) if values else a
              for a in s.assertions()], *[t == v for t, v in values])
    return out
