"""The verifier's z3 context: bounded unsigned variables, product atoms, queries, minimising.

Every scalar the tag pass reasons about is a 64-bit unsigned bit-vector term built through
`argus.layout.symbolic` (UDiv/URem/LShR, never the signed z3py operators). Base variables
(shape symbols, block ids, tile coordinates, loop counters, lanes, registers) are bounded
below 2^24, so sums and products with constants stay far below 2^64 and nothing wraps.

A product of two symbolic terms (e.g. `i * KT`) is never handed to the solver as a
multiplication: it becomes a fresh *product atom*, one per pair of operands, bounded by
the product of their bounds, 0 when a factor is 0 and at least each factor otherwise. That over-approximates (the atom may take values the product
cannot), so an `unsat` answer (no violation) is sound; a `sat` answer is re-checked with
the real products put back before it is reported (`Query.model`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

import weakref

import z3

from argus.layout import symbolic as sym
from argus.verify import termscan
from argus.verify.least import least_value
from argus.verify.arith import WIDTH, bv  # noqa: F401 (smt.WIDTH and smt.bv, as callers use them)
from argus.verify.query_limits import SMALL_TRIP, TIMEOUT_MS

PRETTY_LIMIT = 2000       # product atoms with longer factors are named by s-expressions
NAMED_NODES = 400         # product atoms with larger factors (distinct subterms) are numbered
VAR_LIMIT = 1 << 24          # every base variable is below this


def _small_range(x):
    """n when every value of x lies below a constant n <= SMALL_TRIP that its form states:
    a remainder by n (`(e + 1) % E`), or a few low bits below zeros (`x % 8` as z3
    simplifies it); else None. Such a factor multiplies exactly, by cases, as a short
    loop's counter does (a product atom would lose `x < n`, and with it `x * N < n * N`)."""
    if z3.is_app_of(x, z3.Z3_OP_BUREM) or z3.is_app_of(x, z3.Z3_OP_BUREM_I):
        d = x.arg(1)
        if z3.is_bv_value(d) and 1 < d.as_long() <= SMALL_TRIP:
            return d.as_long()
    if z3.is_app_of(x, z3.Z3_OP_CONCAT) and x.num_args() == 2 and \
            z3.is_bv_value(x.arg(0)) and x.arg(0).as_long() == 0 and \
            2 ** x.arg(1).size() <= SMALL_TRIP:
        return 2 ** x.arg(1).size()
    return None


def narrow(x, bits: int = 24):
    """A bounded variable (< 2^bits) as a `bits`-wide term, for the layout functions, which
    widen their sums to hold the largest value their inputs' widths allow."""
    if isinstance(x, int):
        return x
    return z3.Extract(bits - 1, 0, bv(x))


def concrete(x) -> Optional[int]:
    """The int value of a term that simplifies to a constant, else None."""
    if isinstance(x, int):
        return x
    s = z3.simplify(x)
    return s.as_long() if z3.is_bv_value(s) else None


@dataclass
class Var:
    name: str            # user-facing name (M, tm, k, t, v, ...)
    term: z3.BitVecRef
    kind: str            # size | block | tile | iteration | warpgroup | position | thread | register


@dataclass
class Context:
    """All variables and background facts (bounds, assumptions) of one kernel's check."""
    vars: dict[str, Var] = field(default_factory=dict)
    facts: list = field(default_factory=list)            # z3 Bool, always assumed
    atoms: dict[tuple[int, int], tuple] = field(default_factory=dict)  # (id a, id b) -> (atom, a, b)
    var_facts: dict[str, list] = field(default_factory=dict)          # var -> its bounds
    small: dict[str, int] = field(default_factory=dict)  # var sexpr -> constant bound (exact x)
    abstraction: object = None    # a sound first attempt for holds() (tags/abstraction.py)
    _fresh: int = 0
    _small_products: dict = field(default_factory=dict)  # (x id, y id) -> (x, y, x * y)
    _copied: dict = field(default_factory=dict)
    quotients: dict = field(default_factory=dict)   # (R id, S id) -> (R, S, Q): R == Q * S
    models: list = field(default_factory=list)      # recent models (refute(), remember())
    definitional: set = field(default_factory=set)  # ids of facts true of every value (atoms')

    # -- variables -----------------------------------------------------------------------
    def var(self, name: str, kind: str, upper=None, lower: int = 0) -> z3.BitVecRef:
        """A fresh bounded variable named `name` (made unique); upper may be a term."""
        unique, n = name, 1
        while unique in self.vars:
            n += 1
            unique = f"{name}#{n}"
        term = z3.BitVec(unique, WIDTH)
        self.vars[unique] = Var(name, term, kind)
        self.var_facts[unique] = []
        self.fact(z3.ULT(term, VAR_LIMIT), unique)
        if lower:
            self.fact(z3.UGE(term, lower), unique)
        if upper is not None:
            for f in below(term, upper):      # a minimum as one bound per arm
                self.fact(f, unique)
        return term

    def fact(self, f, *about: str) -> None:
        """Assume `f` always; `about` names the variables whose bounds it is."""
        self.facts.append(f)
        for name in about:
            self.var_facts[name].append(f)

    def copy_vars(self, names: Iterable[str], suffix: str) -> list[tuple]:
        """Fresh copies of variables (same kind and bounds); returns z3 substitution pairs."""
        pairs = []
        for name in names:
            v = self.vars[name]
            c = z3.BitVec(f"{name}{suffix}", WIDTH)
            pairs.append((v.term, c))
        if tuple(names) not in self._copied.setdefault(suffix, set()):
            self._copied[suffix].add(tuple(names))
            for name in names:
                for f in self.var_facts[name]:
                    self.facts.append(z3.substitute(f, *pairs))
        return pairs

    def copy_with_products(self, names: Iterable[str], suffix: str) -> tuple[list, list]:
        """Copies of variables (copy_vars) and of every product atom over them: the copy
        of a product is the product of the copied factors (its own atom, so a query about
        the copy does not reuse the original's value). Also returns facts relating an atom
        to its copy when one factor is one of the variables and the other mentions none
        (true of real products: equal factors give equal products, a larger factor a
        product larger by at least the other factor), which keep such queries linear."""
        pairs = self.copy_vars(list(names), suffix)
        originals = {a.get_id() for a, _ in pairs}
        related = []
        for atom, a, b in list(self.atoms.values()):
            x, y = bv(a), bv(b)
            if not (_mentions_any(x, originals) or _mentions_any(y, originals)):
                continue
            twin = bv(self.mul(z3.substitute(x, *pairs), z3.substitute(y, *pairs)))
            for f, g in ((x, y), (y, x)):
                if f.get_id() in originals and not _mentions_any(g, originals):
                    f2 = z3.substitute(f, *pairs)
                    related += [z3.Implies(f == f2, atom == twin),
                                z3.Implies(z3.ULT(f, f2), z3.ULE(atom + g, twin)),
                                z3.Implies(z3.ULT(f2, f), z3.ULE(twin + g, atom))]
                    break
            pairs.append((atom, twin))
        return pairs, related

    def name_of_term(self, term) -> str:
        """The unique key of a variable term."""
        for key, v in self.vars.items():
            if v.term.eq(term):
                return key
        raise KeyError(str(term))

    def name_of(self, term) -> str:
        for key, v in self.vars.items():
            if v.term.eq(term):
                return v.name
        return str(term)

    # -- arithmetic that avoids symbolic x symbolic products -----------------------------
    def mul(self, a, b):
        if sym.is_symbolic(a) and sym.is_symbolic(b):
            a, b = z3.simplify(a), z3.simplify(b)
            if z3.is_bv_value(a):
                return self.mul(a.as_long(), b)
            if z3.is_bv_value(b):
                return self.mul(a, b.as_long())
            for x, y in ((a, b), (b, a)):     # a counter of a short constant loop: exact
                bound = self.small.get(x.sexpr()) if z3.is_const(x) else _small_range(x)
                if bound is not None:
                    got = self._small_products.get((x.get_id(), y.get_id()))
                    if got is None:
                        out = z3.BitVecVal(0, WIDTH)
                        for c in range(bound - 1, 0, -1):
                            out = z3.If(bv(x) == c, sym.mul(bv(y), c), out)
                        got = self._small_products[(x.get_id(), y.get_id())] = (x, y, out)
                    return got[2]
            key = tuple(sorted((a.get_id(), b.get_id())))    # a, b kept alive below
            if key not in self.atoms:
                self._fresh += 1
                # named by its factors: the pretty form, unless the printer elided a deep
                # factor ("..."; two products then shared a name, so one z3 constant, and
                # u' * y == v' * y was proved), then the complete s-expressions. (The
                # pretty form where it is complete keeps every other name, and with them
                # z3's search order, which moves check times by up to 2x either way.)
                # Factors of thousands of characters (an expert's prefix sum over 128
                # counts) are elided anyway: not printed pretty first (0.1-0.3 s each).
                # A factor of hundreds of subterms is not printed at all: its product is
                # numbered (printing an ITE over 128 prefix sums took 0.1 s a product,
                # and the name, half a megabyte, was printed again with every query)
                if termscan.larger_than(a, NAMED_NODES) or termscan.larger_than(b, NAMED_NODES):
                    name = f"(product#{self._fresh})"
                else:
                    full = "({}*{})".format(*sorted((self._sexpr(a), self._sexpr(b))))
                    text = full if len(full) > PRETTY_LIMIT else f"({a}*{b})"
                    name = full if "..." in text else text
                atom = z3.BitVec(name, WIDTH)
                # true of the real product (no factor reaches 2^24, so nothing wraps);
                # linear, so queries stay cheap: zero with a zero factor, else at least
                # the other factor
                x, y = bv(a), bv(b)
                meaning = [z3.ULT(atom, VAR_LIMIT * VAR_LIMIT),
                           z3.Implies(x == 0, atom == 0), z3.Implies(y == 0, atom == 0),
                           z3.Implies(z3.UGE(x, 1), z3.UGE(atom, y)),
                           z3.Implies(z3.UGE(y, 1), z3.UGE(atom, x))]
                self.facts += meaning
                self.definitional |= {f.get_id() for f in meaning}
                self.atoms[key] = (atom, a, b)
            return self.atoms[key][0]
        return sym.mul(a, b)

    def _sexpr(self, t) -> str:
        """t's s-expression, remembered (an expert's prefix sum over 128 counts is printed
        for every product it is a factor of: 0.1 s each)."""
        memo = self.__dict__.setdefault("_sexprs", {})
        got = memo.get(t.get_id())
        if got is None:
            got = memo[t.get_id()] = (t, t.sexpr())     # t kept alive: its id stays its own
        return got[1]

    def define_quotient(self, r, s, q) -> None:
        """Q is R / S exactly (an assumption says S divides R): R == Q * S, and R // S,
        R % S are Q and 0 from now on (argus/verify/quotients.py)."""
        self.quotients[(r.get_id(), s.get_id())] = (r, s, q)
        self.facts.append(bv(r) == bv(self.mul(q, s)))

    def quotient(self, r, s):
        """Q for R // S when an assumption made S divide R (define_quotient), else None."""
        if not (z3.is_expr(r) and z3.is_expr(s)):
            return None
        hit = self.quotients.get((r.get_id(), s.get_id()))
        return hit[2] if hit is not None else None

    # -- models found so far: a claim they already refute needs no solver ----------------
    MODELS = 8

    def refute(self, formulas) -> bool:
        """Is there a remembered model in which every formula is true? Then their
        conjunction is satisfiable: a model is a witness, whatever query found it (the
        formulas are evaluated exactly, every unnamed constant completed to a value)."""
        return self.witness(formulas) is not None

    def witness(self, formulas, also=None):
        """A remembered model in which every formula is true (and `also(model)`), or None."""
        formulas = _formulas(formulas)
        for i, m in enumerate(self.models):
            if all(z3.is_true(m.eval(f, model_completion=True)) for f in formulas) and \
                    (also is None or also(m)):
                if i:
                    self.models.insert(0, self.models.pop(i))
                return m
        return None

    def remember(self, model) -> None:
        self.models.insert(0, model)
        del self.models[self.MODELS:]

    def product_facts(self):
        """The real meaning of every product atom (used only to confirm a model)."""
        return [atom == a * b for atom, a, b in self.atoms.values()]


    def order_facts(self, formulas) -> list:
        """Facts ordering the product atoms that `formulas` reach (they or the facts about
        their variables mention them) by their factors, for each two atoms with a factor
        in common (u * s and x * s): u < x gives u * s + s <= x * s, u == x equal
        products, x < u the converse. True of the real products (no factor reaches 2^24,
        so nothing wraps) and linear, so `b < Q` proves b * S + S <= Q * S = R; asked for
        by the queries about segments and their stores, not added to every query (they
        tie every product to every other over the same factor). Only the pairs of which
        one atom is named by `formulas` (or is an atom inside a named one's factors): a
        query compares its own products with each other and with those of the facts
        (R == Q * S), not two products it does not name. All pairs (642 facts for the
        log-sum-exp segment `(b * HQ + h) * SQ` of attention_bshd, 0.6 s of solving)
        cost more than they prove; any subset of true facts is sound."""
        reached = [*formulas, *relevant(self.facts, list(formulas))]
        ids, named = set(), set()
        for f in reached:
            ids |= _vars_of(f)
        for f in formulas:
            named |= _vars_of(f)
        mine = [(atom, bv(a), bv(b)) for atom, a, b in self.atoms.values()
                if atom.get_id() in ids]
        for atom, x, y in reversed(mine):      # created after their factors' atoms
            if atom.get_id() in named:
                named |= _vars_of(x) | _vars_of(y)
        out = []
        for i, (atom, x, y) in enumerate(mine):
            for other, c, d in mine[i + 1:]:
                if atom.get_id() not in named and other.get_id() not in named:
                    continue
                for own, shared in ((x, y), (y, x)):
                    for theirs, same in ((c, d), (d, c)):
                        if shared.eq(same) and not own.eq(theirs):
                            out += [z3.Implies(z3.ULT(theirs, own), z3.ULE(other + shared, atom)),
                                    z3.Implies(theirs == own, other == atom),
                                    z3.Implies(z3.ULT(own, theirs), z3.ULE(atom + shared, other))]
        return out


def _mentions_any(expr, ids) -> bool:
    return not _vars_of(expr).isdisjoint(ids)


def _mentions(expr, var) -> bool:
    if expr.eq(var):
        return True
    return any(_mentions(c, var) for c in expr.children())


# -- solving, with the unsatisfiable conjunctions of this process remembered ----------------
_UNSAT: dict[tuple, list] = {}     # sorted AST ids -> the formulas (alive, so ids stay theirs)
UNSAT_MEMO_LIMIT = 20_000


def _formulas(formulas) -> list:
    return [f if z3.is_expr(f) else z3.BoolVal(bool(f)) for f in formulas]


def _key(formulas) -> tuple:
    return tuple(sorted({f.get_id() for f in formulas}))


def known_unsat(formulas) -> bool:
    """Was this conjunction (as a set of formulas) already proved unsatisfiable?"""
    return _key(_formulas(formulas)) in _UNSAT


def remember_unsat(formulas) -> None:
    formulas = _formulas(formulas)
    _remember(_key(formulas), formulas)


def _remember(key, formulas) -> None:
    if len(_UNSAT) >= UNSAT_MEMO_LIMIT:
        _UNSAT.clear()
    _UNSAT[key] = formulas


def _remainders(f) -> tuple:
    """The x % c subterms of f (c a constant above 1, not a power of two)."""
    return tuple(termscan.scan(f).remainders.values())


def mod_lemmas(formulas) -> list:
    """True facts relating remainders x % c and y % c (c a constant, not a power of two,
    where a bit-blasted divider makes z3 slow) of arguments that differ by a constant d:
    when y + d does not wrap, x % c == (y % c + d % c) % c. Added to a query they change
    nothing of its meaning; they let z3 refute "stage (g - 1) % 3 == g % 3" at once."""
    rems = {}
    for f in formulas:
        for t in _remainders(f):
            rems[t.get_id()] = t
    out = []
    items = list(rems.values())
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            c = a.arg(1).as_long()
            if b.arg(1).as_long() != c or a.arg(0).size() != b.arg(0).size():
                continue
            d = z3.simplify(a.arg(0) - b.arg(0))
            if not z3.is_bv_value(d):
                continue
            for x, y, dv in ((a, b, d.as_long()), (b, a, (-d.as_long()) % (1 << d.size()))):
                top = (1 << y.arg(0).size()) - 1 - dv
                if top < 0:
                    continue
                out.append(z3.Implies(z3.ULE(y.arg(0), top),
                                      x == z3.URem(y + dv % c, c)))
    return out


_DIVS = (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I, z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I)


_DIVISIONS_OF: dict[int, tuple] = {}     # formula id -> (the formula, its divisions)


def _divisions(formulas) -> dict:
    """(x, d) -> (the x // d term or None, the x % d term or None) for every division by a
    divisor that is not a constant (a grid-stride loop's `w // TN`, `w % TN`); each
    formula's divisions are found once (facts recur in every query)."""
    out = {}
    for f in formulas:
        if not z3.is_expr(f):
            continue
        hit = _DIVISIONS_OF.get(f.get_id())
        if hit is None:
            if len(_DIVISIONS_OF) >= 20 * UNSAT_MEMO_LIMIT:
                _DIVISIONS_OF.clear()
            hit = (f, _divisions_in([f]))
            _DIVISIONS_OF[f.get_id()] = hit
        for key, (q, r) in hit[1].items():
            q0, r0 = out.get(key, (None, None))
            out[key] = (q0 if q0 is not None else q, r0 if r0 is not None else r)
    return out


def _divisions_in(formulas) -> dict:
    out = {}
    for f in formulas:
        if not z3.is_expr(f):
            continue
        for key, (q, r) in termscan.scan(f).divisions.items():
            q0, r0 = out.get(key, (None, None))
            out[key] = (q0 if q0 is not None else q, r0 if r0 is not None else r)
    return out


def symbolic_divisor(formulas) -> bool:
    return any(not z3.is_bv_value((q if q is not None else r).arg(1))
               for q, r in _divisions(formulas).values())


def _power_of_two(d) -> bool:
    return z3.is_bv_value(d) and d.as_long() > 0 and not d.as_long() & (d.as_long() - 1)


def without_divisions(formulas):
    """The formulas with every division x // d, x % d by a non-constant d replaced by
    fresh q, r and a fresh p standing for q * d, with true facts only: x == p + r, p <= x,
    r < d (d > 0), and between two divisions by one d: q == q' exactly when p == p'.
    Every model of the formulas extends to one of these (the fresh names take the real
    values), so an unsat answer here holds for the formulas; the bit-blasted divider
    z3 cannot get through is gone (None when there is no such division)."""
    divs = _divisions(formulas)
    if not divs:
        return None
    subst, facts, by_divisor = [], [], {}
    for n, ((xid, did), (q, r)) in enumerate(divs.items()):
        x, d = (q if q is not None else r).arg(0), (q if q is not None else r).arg(1)
        qv, rv, pv = (z3.BitVec(f"{name}!div{n}", x.size()) for name in ("q", "r", "p"))
        if q is not None:
            subst.append((q, qv))
        if r is not None:
            subst.append((r, rv))
        nonzero = d != 0
        if z3.is_bv_value(d):          # by a constant: p is q * d exactly (no divider)
            facts.append(pv == qv * d)
        facts += [z3.Implies(nonzero, x == pv + rv), z3.Implies(nonzero, z3.ULE(pv, x)),
                  z3.Implies(nonzero, z3.ULT(rv, d)), z3.Implies(nonzero, z3.ULE(qv, x))]
        for q2, p2 in by_divisor.get(did, ()):
            facts.append(z3.Implies(nonzero, (qv == q2) == (pv == p2)))
            facts.append(z3.Implies(nonzero, z3.ULT(qv, q2) == z3.ULT(pv, p2)))
        by_divisor.setdefault(did, []).append((qv, pv))
    # innermost first: a division inside another's argument is replaced in both
    out = list(formulas)
    for _ in range(4):
        changed = [z3.substitute(f, *subst) if z3.is_expr(f) else f for f in out]
        if all(a.eq(b) for a, b in zip(changed, out) if z3.is_expr(a)):
            break
        out = changed
    facts = [z3.substitute(f, *subst) for f in facts]
    if _divisions(out):
        return None
    return out + facts


class _Found:
    """A model standing for a solver that found it (solve(..., solver=False))."""

    def __init__(self, model):
        self._model = model

    def model(self):
        return self._model


def solve(formulas, timeout_ms: int = TIMEOUT_MS, solver: bool = True):
    """(z3's answer, the solver) for the conjunction of `formulas`; the solver is None when
    the answer is a remembered unsat. Many questions repeat: the warpgroups of a role are
    walked one by one, and the nt/nn (or other) variants of a kernel in one file share
    most of their obligations. z3 terms are hash-consed, so structurally equal formulas
    have one id while alive; the memo keeps the formulas it keys on alive.

    `solver=False` (only the answer and a model are wanted, not a solver to go on with):
    a model of the division-free version that satisfies the formulas themselves (its
    fresh quotients happen to be the real ones) is the answer, with no second solve; the
    second value then only has .model()."""
    formulas = _formulas(formulas)
    key = _key(formulas)
    if key in _UNSAT:
        return z3.unsat, None
    cheap = without_divisions(formulas)
    if cheap is not None:             # first without the dividers: an unsat holds
        s = z3.Solver()
        s.set("timeout", timeout_ms)
        s.add(*cheap, *mod_lemmas(cheap))
        got = s.check()
        if got == z3.unsat:
            _remember(key, formulas)
            return z3.unsat, None
        if got == z3.unknown and symbolic_divisor(formulas):
            return z3.unknown, s      # a bit-blasted symbolic divider does no better
        if got == z3.sat and not solver:
            m = s.model()             # a model of the formulas themselves: no second solve
            if all(z3.is_true(m.eval(f, model_completion=True)) for f in formulas):
                return z3.sat, _Found(m)
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(*formulas, *mod_lemmas(formulas))
    result = s.check()
    if result == z3.unsat:
        _remember(key, formulas)
    return result, s


_SAT: dict[tuple, list] = {}       # the same, for conjunctions found satisfiable


def verdict(formulas, timeout_ms: int = TIMEOUT_MS):
    """sat / unsat / unknown for the conjunction, remembered either way (for questions
    that need no model, e.g. "can this barrier index take the value j")."""
    formulas = _formulas(formulas)
    key = _key(formulas)
    if key in _SAT:
        return z3.sat
    result, _ = solve(formulas, timeout_ms, solver=False)
    if result == z3.sat:
        if len(_SAT) >= UNSAT_MEMO_LIMIT:
            _SAT.clear()
        _SAT[key] = formulas
    return result


def first_model(ctx: Context, goal, minimise: Iterable = (), extra: Iterable = (),
                exact_only: bool = False):
    """A model of facts & goal, confirmed with real products, minimised lexicographically
    over `minimise` (terms, most important first); None when goal cannot hold. When no
    model survives the real products, the over-approximate one is returned (the check
    cannot be proved; its counterexample may not be reachable) unless `exact_only`.

    The real products (64-bit multipliers, costly to bit-blast) are given to the solver
    lazily (_lazy_check): a model that gives a product atom another value than its
    product brings true facts about that product, and the search goes on until a model
    gives every atom its product (an exact model) or the solver finds none (unsat of true
    facts). Every answer of the minimisation is thus the one the solver would give with
    the products asserted, and so is the lexicographic minimum."""
    base = [*ctx.facts, *extra, goal]
    products = ctx.product_facts()
    exact = base + products                 # unsatisfiable when base is
    model = None
    if not known_unsat(exact):
        s = z3.Solver()
        s.set("timeout", TIMEOUT_MS)
        s.add(*base, *mod_lemmas(base))
        lazy = {atom.get_id(): [atom, bv(a), bv(b), 0] for atom, a, b in ctx.atoms.values()}
        small = _small_model(ctx, s, lazy, list(minimise))
        if small is not None and _all_exact(ctx, small):
            return small
        result, _ = _lazy_check(s, lazy)
        if result == z3.sat:
            least(s, list(minimise), lazy)
            model = s.model()
            if not _all_exact(ctx, model):  # never a model of products no run computes
                model = None
        elif result == z3.unsat:
            remember_unsat(exact)
        else:                               # undecided: dividers first, all products
            model = _minimised(exact, list(minimise))
    if model is None and not exact_only:   # it needs a product value that cannot occur
        model = _minimised(base, list(minimise))
    return model


def _all_exact(ctx: Context, model) -> bool:
    """Does the model give every product atom its product? (What the lazy check ends
    with; asked again of the answer, so a lost product fact cannot pass unseen.)"""
    return all(_exact(model, atom, bv(a), bv(b)) for atom, a, b in ctx.atoms.values())


SMALL_SIZES = 4096      # sizes and block ids of the first search for a counterexample


def _small_model(ctx: Context, s, lazy: dict, minimise: list):
    """A minimised exact model with every size and block id at most SMALL_SIZES, when one
    exists (a bug usually shows at small sizes, where the lazy products settle in a round
    or two); None otherwise (the search over every size goes on, `s` as it was but for
    the product facts the small search asserted). The counterexample is then the least
    one among small sizes.

    The lazy check may retire an atom from `lazy` and assert its product instead; that
    fact lives in the scope popped here, so it is asserted again outside it (a true
    fact): else the search over every size would see the atom neither lazy nor asserted
    and could answer with a model that gives it any value (a false counterexample)."""
    bounds = [z3.ULE(v.term, SMALL_SIZES) for v in ctx.vars.values()
              if v.kind in ("size", "block")]
    if not bounds:
        return None
    s.push()
    s.add(*bounds)
    result, added = _lazy_check(s, lazy)
    if result != z3.sat:
        s.pop()
        s.add(*added)
        return None
    least(s, minimise, lazy)
    model = s.model()
    s.pop()
    return model


def exact_solve(ctx: Context, formulas, timeout_ms: int = TIMEOUT_MS):
    """(z3's answer, the solver) for the conjunction of `formulas` with the real product
    of every product atom they mention (through other atoms' factors too), the products
    asserted lazily (_lazy_check): a sat answer comes with a model that gives each such
    atom its product, an unsat one is of true facts. An atom none of them mentions is
    free, so its product changes nothing of the answer."""
    formulas = _formulas(formulas)
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(*formulas, *mod_lemmas(formulas))
    lazy = {atom.get_id(): [atom, x, y, 0]
            for atom, x, y in termscan.products_reached(ctx.atoms, formulas)}
    found = ctx.witness(formulas, lambda m: all(_exact(m, *e[:3]) for e in lazy.values()))
    if found is not None:             # a model found before is one (holds() keeps them)
        return z3.sat, _Found(found)
    return _lazy_check(s, lazy)[0], s


def _exact(m, atom, x, y) -> bool:
    """Does model m give the product atom its product?"""
    vx, vy, va = (m.eval(t, model_completion=True).as_long() for t in (x, y, atom))
    return (vx * vy) % (1 << WIDTH) == va


LEMMA_ROUNDS = 4      # instances of one product asserted before the product itself


def _lazy_check(s, lazy: dict):
    """s.check() with the real products of `lazy` (atom id -> [atom, x, y, rounds])
    asserted only as far as the models found need them: when a model gives an atom a
    value other than x * y, the instances of the product at the model's factors,
    x == vx => atom == vx * y and y == vy => atom == x * vy (true, and linear), are
    asserted and the solver asked again; after LEMMA_ROUNDS such rounds the product
    itself. Ends with a model that gives every atom its product (an exact model), or
    with unsat (of true facts) or unknown. Returns the answer and the facts asserted
    (gone with the scope they were added in: least() asserts them again after its pop)."""
    added = []
    while True:
        result = s.check()
        if result != z3.sat or not lazy:
            return result, added
        m = s.model()
        new = []
        for k, entry in list(lazy.items()):
            atom, x, y, rounds = entry
            if _exact(m, atom, x, y):
                continue
            vx, vy = (m.eval(t, model_completion=True).as_long() for t in (x, y))
            if rounds >= LEMMA_ROUNDS:
                new.append(atom == x * y)
                del lazy[k]
            else:
                new.append(z3.And(z3.Implies(x == vx, atom == y * vx),
                                  z3.Implies(y == vy, atom == x * vy)))
                entry[3] += 1
        if not new:
            return result, added
        s.add(*new)
        added += new


def exact_check(ctx: Context, goal, extra: Iterable = ()):
    """sat / unsat / unknown of facts & goal with the product atoms given their meaning."""
    return solve([*ctx.facts, *extra, *ctx.product_facts(), goal], solver=False)[0]


def holds(ctx: Context, claim, extra: Iterable = (), in_integers: bool = False,
          confined_first: bool = True) -> bool:
    """Is `claim` true under the facts for every value of every variable?

    Only the facts connected to the claim (sharing a variable with it, transitively) are
    given to the solver: fewer assumptions can only make a proof harder, never wrong, and
    a claim about layouts (positions, kk) then does not drag in every size's bounds.
    `confined_first=False`: no first try with the facts of the claim's own variables (a
    claim that reaches nearly all of them would only be asked twice when it fails).
    `in_integers`: first try the exact translation to linear integer arithmetic
    (integers.py), for claims about tile and block arithmetic with divisions by constants
    (a causal loop's bound), which bit-blasting is slow on. A context with routing data
    (ctx.abstraction) always does: when its abstraction does not prove the claim, the
    integers usually find the counterexample of a false one in milliseconds where the
    bit-blasted routing sums take seconds (a model is used only once it is confirmed
    with the bit-vector formulas and real products, integer_models.decide)."""
    asked = [*extra, z3.Not(claim)]
    facts = relevant(ctx.facts, asked)
    if ctx.refute([*asked, *facts]):          # a model found before: the claim fails
        return False
    if known_unsat([*facts, *asked]):         # proved before (another warpgroup's walk)
        return True
    if symbolic_divisor(asked) and \
            integer_unsat(ctx, [*confined(facts, asked), *extra], z3.Not(claim)):
        return True     # a division by a symbol (`w // TN, w % TN` of a hand-written
                        # persistent walk, 2.4 s bit-blasted): in integers, its quotient
                        # and remainder named, with the facts of its own variables
    if in_integers and ctx.abstraction is not None and \
            not any(termscan.scan(x).routed for x in asked) and \
            integer_unsat(ctx, [*confined(facts, asked), *extra], z3.Not(claim)):
        return True     # nothing to abstract (a segment e * F + F <= E * F): in integers
                        # with the facts of its own variables first
    if ctx.abstraction is not None and ctx.abstraction.proves(claim, list(extra)):
        return True
    if in_integers or ctx.abstraction is not None:   # and a false claim's model
        from argus.verify import integer_models
        if ctx.abstraction is None:           # first with the facts of its own variables
            small = confined(facts, asked)    # (tile arithmetic: 10-17% of attention's check)
            if len(small) < len(facts) and integer_unsat(ctx, [*small, *extra], z3.Not(claim)):
                return True
        answer, model = integer_models.decide(ctx, [*facts, *extra], z3.Not(claim))
        if answer == z3.unsat:
            return True
        if model is not None:
            ctx.remember(model)
            return False
    small = confined(facts, asked)
    if confined_first and len(small) < len(facts) and \
            solve([*small, *asked], timeout_ms=SMALL_MS)[0] == z3.unsat:
        return True                           # proved with the facts of its own variables
    result, s = solve([*facts, *asked], solver=False)
    if result == z3.sat:
        ctx.remember(s.model())
    return result == z3.unsat


def integer_unsat(ctx: Context, facts, goal) -> bool:
    """facts & goal impossible, shown in integers (integers.py: exact; a fact that does not
    translate is left out, which can only make this fail). False when not shown so."""
    from argus.verify import integers
    try:
        return integers.unsat_in(ctx, facts, goal)
    except integers.Untranslatable:
        pass
    # divisions by a symbol (w // TN, w % TN of a hand-written persistent walk): their
    # quotient, remainder and product as fresh names with true facts (without_divisions),
    # which every model extends to: an unsat answer holds
    cheap = without_divisions([*facts, goal])
    if cheap is None:
        return False
    try:
        return integers.unsat_in(ctx, cheap, z3.BoolVal(True))
    except integers.Untranslatable:
        return False


SMALL_MS = 500           # the first try of holds(), with the facts of the claim's variables


def _vars_of(f) -> frozenset:
    """The ids of the uninterpreted constants (variables, product atoms) in a term, with
    every subterm's answer remembered (terms share most of their subterms). The facts are
    asked about again and again as the same Python objects: those answers are looked up
    by the object first (the object kept alive, so its id stays its own)."""
    key = id(f)
    got = _VARS_BY_OBJECT.get(key)
    if got is not None and got[0]() is f:
        return got[1]
    out = termscan.scan(f).variables
    try:                 # the object is not kept alive: its entry goes when it does
        ref = weakref.ref(f, lambda _, key=key: _VARS_BY_OBJECT.pop(key, None))
    except TypeError:    # a plain bool
        return out
    _VARS_BY_OBJECT[key] = (ref, out)
    return out


_VARS_BY_OBJECT: dict[int, tuple] = {}


def mentions(term, ids) -> bool:
    """Does `term` contain one of the variables (or product atoms) with these ids?"""
    return not _vars_of(term).isdisjoint(ids)


def only(term, ids) -> bool:
    """Are all the variables (and product atoms) of `term` among these ids?"""
    return _vars_of(term) <= ids


def below(x, bound) -> list:
    """x < bound (unsigned) as a list of constraints, a minimum split into its arms:
    x < If(a < b, a, b) is x < a and x < b (the DSL's `minimum` is that If), which the
    solver then uses directly instead of case-splitting the If."""
    b = bv(bound) if not isinstance(bound, int) else z3.BitVecVal(bound, WIDTH)
    if z3.is_app(b) and b.decl().kind() == z3.Z3_OP_ITE:
        c, t, e = b.children()
        if z3.is_app(c) and c.decl().kind() in (z3.Z3_OP_ULT, z3.Z3_OP_ULEQ) and \
                c.arg(0).eq(t) and c.arg(1).eq(e):
            return below(x, t) + below(x, e)
    return [z3.ULT(bv(x), b)]


def confined(facts, about) -> list:
    """The facts about no variable but those of `about` (their bounds, relations among
    them): a first, small set to try a proof with. Fewer facts can only make a proof
    harder, never wrong; `relevant` gives the rest."""
    wanted = set()
    for f in about:
        wanted |= _vars_of(f)
    return [f for f in facts if _vars_of(f) <= wanted]


def relevant(facts, about) -> list:
    """The facts that share a variable, directly or through other facts, with `about`."""
    wanted = set()
    for f in about:
        wanted |= _vars_of(f)
    pending = [(f, _vars_of(f)) for f in facts]
    out, changed = [], True
    while changed:
        changed, rest = False, []
        for f, vs in pending:
            if vs & wanted or not vs:
                out.append(f)
                wanted |= vs
                changed = True
            else:
                rest.append((f, vs))
        pending = rest
    return out


def _minimised(constraints, order):
    result, s = solve(constraints)
    if result != z3.sat:
        return None
    least(s, order)
    return s.model()


def least(s, order, lazy: dict | None = None) -> None:
    """Pin each term of `order` in turn to its least value (s is sat and stays sat).
    With `lazy` (first_model), facts asserted only when a model violates them."""
    lazy = {} if lazy is None else lazy

    def probe(bound):
        s.push()
        s.add(bound)
        result, added = _lazy_check(s, lazy)
        found = s.model().eval(term, model_completion=True).as_long() \
            if result == z3.sat else None
        s.pop()
        s.add(*added)                # true facts: kept outside the probe's scope
        return found

    for term in order:
        start = s.model().eval(term, model_completion=True).as_long()
        best = least_value(lambda bound: probe(z3.ULE(term, bound)), start)
        s.add(term == best)
        _lazy_check(s, lazy)


def value(model, term) -> int:
    if isinstance(term, int):
        return term
    return model.eval(bv(term), model_completion=True).as_long()
