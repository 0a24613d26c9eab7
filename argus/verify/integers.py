"""The same query in integer arithmetic: an exact translation of the tag pass's unsigned
bit-vector terms to linear integer terms, for the queries about routing sums.

Bit-blasted, "the segments of two experts never overlap" over eight 64-bit routing counts
takes z3 seconds (or times out); as linear integer arithmetic it takes milliseconds. The
translation is exact, not an approximation: an n-bit variable or uninterpreted value
becomes an integer in [0, 2^n), and every operation keeps its modular meaning (a sum or
difference is taken mod 2^n, `x >> 7` is `x div 128`, `Extract(h, l, x)` is
`(x div 2^l) mod 2^(h-l+1)`, a division or remainder by a constant is integer division,
a signed comparison compares x - 2^n for x with its top bit set).
Operations with no linear meaning (a product or quotient of two variables, bitwise and/xor
with a non-mask, shifts by a variable) are not translated: `Untranslatable`, and the
caller falls back to the bit-vector query.
"""

from __future__ import annotations

import z3

from argus.verify import termscan
from argus.verify.query_limits import TIMEOUT_MS


class Untranslatable(Exception):
    pass


def key(t) -> str:
    """A cheap name of a term: a constant's own name, else its s-expression (z3's
    pretty printer, str(), is far slower)."""
    if z3.is_const(t):
        return t.decl().name()
    return t.sexpr()


def _node(t):
    """(decl kind or None, is a bit-vector, numeral value or None) of t, read through z3's C
    API: the Python predicates (`is_true`, `is_bv_value`, `decl().kind()`, `is_bv`) each
    re-derive the AST kind and sort, 15 C calls a node, most of the translation's time."""
    c, a = t.ctx_ref(), t.as_ast()
    sort_kind = z3.Z3_get_sort_kind(c, z3.Z3_get_sort(c, a))
    bitvector = sort_kind == z3.Z3_BV_SORT
    kind = z3.Z3_get_ast_kind(c, a)
    if kind == z3.Z3_NUMERAL_AST:
        return None, bitvector, int(z3.Z3_get_numeral_string(c, a))
    if kind != z3.Z3_APP_AST:
        return None, bitvector, None
    return z3.Z3_get_decl_kind(c, z3.Z3_get_app_decl(c, z3.Z3_to_app(c, a))), bitvector, None


def _children(t) -> list:
    """t's arguments as Python terms, each made as the class of its sort directly (z3's
    generic `children()` asks every argument's sort of a dozen kinds first)."""
    c, ctx = t.ctx_ref(), t.ctx
    if z3.Z3_get_ast_kind(c, t.as_ast()) != z3.Z3_APP_AST:      # a numeral or bound variable
        return []
    app = z3.Z3_to_app(c, t.as_ast())
    out = []
    for i in range(z3.Z3_get_app_num_args(c, app)):
        x = z3.Z3_get_app_arg(c, app, i)
        sort_kind = z3.Z3_get_sort_kind(c, z3.Z3_get_sort(c, x))
        if sort_kind == z3.Z3_BV_SORT:
            out.append(z3.BitVecNumRef(x, ctx) if z3.Z3_get_ast_kind(c, x) == z3.Z3_NUMERAL_AST
                       else z3.BitVecRef(x, ctx))
        elif sort_kind == z3.Z3_BOOL_SORT:
            out.append(z3.BoolRef(x, ctx))
        else:
            out.append(z3.z3._to_expr_ref(x, ctx))
    return out


class Translator:
    """Translates terms, keeping for each bit-vector term an upper bound of its value
    (`bounds` gives those of variables and routing values, from their facts): a sum or
    product that cannot reach 2^n needs no modulo, which keeps the integer query linear
    and small."""

    def __init__(self, bounds: dict | None = None):
        self.memo: dict[int, tuple] = {}
        self.ranges: list = []              # 0 <= v <= bound of every variable and value
        self.bounds = dict(bounds or {})    # key(term) -> inclusive upper bound
        self._vars: dict[str, object] = {}
        self._funcs: dict[str, object] = {}
        self._apps: dict = {}
        self.leaves: list = []              # (bit-vector leaf, its integer) for models
        self._range_of: dict = {}           # integer leaf id -> its range
        self._app_ids: set = set()          # ids of the routing values' integers

    def term(self, t):
        return self._get(t)[0]

    def _get(self, t):
        key = t.get_id()            # the memo keeps t alive, so its id is not reused
        got = self.memo.get(key)
        if got is None:
            got = (t, *self._term(t))
            self.memo[key] = got
        return got[1:]

    def _leaf(self, x, t, width):
        hi = min(self.bounds.get(key(t), 2 ** width - 1), 2 ** width - 1)
        self.ranges.append(z3.And(x >= 0, x <= hi))
        self.leaves.append((t, x))
        self._range_of[x.get_id()] = self.ranges[-1]
        return x, hi

    def ranges_for(self, formulas) -> list:
        """The ranges of the integer variables of `formulas` (translated terms), and of
        every routing value (an application, kept whole)."""
        ids = set()
        for f in formulas:
            ids |= termscan.scan(f).variables
        return [r for i, r in self._range_of.items() if i in ids] + \
            [r for i, r in self._range_of.items() if i in self._app_ids]

    def _term(self, t):
        """(integer term, upper bound or None for a Bool)."""
        k, bitvector, number = _node(t)
        if k == z3.Z3_OP_TRUE:
            return z3.BoolVal(True), None
        if k == z3.Z3_OP_FALSE:
            return z3.BoolVal(False), None
        if number is not None and bitvector:
            return z3.IntVal(number), number
        if bitvector:
            return self._bv(t, k)
        kids = _children(t)
        if k in _SIGNED:           # x as a signed n-bit number: x - 2^n when its top bit is set
            a, b = (self._signed(c) for c in kids)
            return _SIGNED[k](a, b), None
        args = [self.term(c) for c in kids]
        ops = {z3.Z3_OP_ULT: lambda: args[0] < args[1], z3.Z3_OP_ULEQ: lambda: args[0] <= args[1],
               z3.Z3_OP_UGT: lambda: args[0] > args[1], z3.Z3_OP_UGEQ: lambda: args[0] >= args[1],
               z3.Z3_OP_EQ: lambda: args[0] == args[1], z3.Z3_OP_IFF: lambda: args[0] == args[1],
               z3.Z3_OP_DISTINCT: lambda: z3.Distinct(*args), z3.Z3_OP_AND: lambda: z3.And(*args),
               z3.Z3_OP_OR: lambda: z3.Or(*args), z3.Z3_OP_NOT: lambda: z3.Not(args[0]),
               z3.Z3_OP_IMPLIES: lambda: z3.Implies(*args), z3.Z3_OP_ITE: lambda: z3.If(*args)}
        if k in ops:
            return ops[k](), None
        raise Untranslatable(f"the operation {t.decl().name()}")

    def _signed(self, t):
        x, hi = self._get(t)
        half = 2 ** (t.size() - 1)
        return x if hi < half else z3.If(x >= half, x - 2 * half, x)

    def _bv(self, t, k):
        n = t.size()
        mod = 2 ** n
        top = mod - 1

        def wrap(x, hi):
            return (x, hi) if hi <= top else (x % mod, top)
        kids = _children(t)
        if not kids and k == z3.Z3_OP_UNINTERPRETED:      # a variable
            name = key(t)
            if name not in self._vars:
                self._vars[name] = self._leaf(z3.Int(f"{name}#int"), t, n)
            return self._vars[name]
        got = [self._get(c) for c in kids]
        args = [g[0] for g in got]
        his = [g[1] for g in got]
        if k == z3.Z3_OP_UNINTERPRETED:
            d = t.decl()
            name = d.name()
            if name not in self._funcs:
                self._funcs[name] = z3.Function(f"{name}#int", *[z3.IntSort()] * (d.arity() + 1))
            out = self._funcs[name](*args)
            if out.get_id() not in self._apps:
                self._apps[out.get_id()] = (out, self._leaf(out, t, n)[1])
                self._app_ids.add(out.get_id())
            return out, self._apps[out.get_id()][1]
        if k == z3.Z3_OP_BADD:
            return wrap(z3.Sum(*args), sum(his))
        if k == z3.Z3_OP_BSUB:
            a, b = args
            return z3.If(a >= b, a - b, a - b + mod), top
        if k == z3.Z3_OP_BNEG:
            return z3.If(args[0] == 0, 0, mod - args[0]), top
        if k == z3.Z3_OP_BMUL:
            if len(args) - sum(1 for c in kids if z3.is_bv_value(c)) > 1:
                raise Untranslatable("a product of two variables")
            hi = 1
            for h in his:
                hi *= h
            return wrap(z3.Product(*args), hi)
        if k in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I, z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I):
            d = kids[1]
            if not (z3.is_bv_value(d) and d.as_long() > 0):
                raise Untranslatable("a division by a variable")
            c = d.as_long()
            if k in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I):
                return (args[0] / c if c > 1 else args[0]), his[0] // c
            return (args[0] % c if his[0] >= c else args[0]), min(his[0], c - 1)
        if k == z3.Z3_OP_EXTRACT:
            hi_bit, lo = t.params()
            x = args[0] / (2 ** lo) if lo else args[0]
            h = his[0] >> lo
            width = 2 ** (hi_bit - lo + 1)
            return (x, h) if h < width else (x % width, width - 1)
        if k == z3.Z3_OP_CONCAT:
            out, hi = args[0], his[0]
            for c, a, h in zip(kids[1:], args[1:], his[1:]):
                out, hi = out * (2 ** c.size()) + a, hi * (2 ** c.size()) + h
            return out, hi
        if k == z3.Z3_OP_ZERO_EXT:
            return args[0], his[0]
        if k in (z3.Z3_OP_BLSHR, z3.Z3_OP_BSHL):
            if not z3.is_bv_value(kids[1]):
                raise Untranslatable("a shift by a variable")
            c = 2 ** kids[1].as_long()
            if k == z3.Z3_OP_BLSHR:
                return args[0] / c, his[0] // c
            return wrap(args[0] * c, his[0] * c)
        if k == z3.Z3_OP_BAND:
            masks = [c for c in kids if z3.is_bv_value(c)]
            if len(kids) == 2 and masks and (masks[0].as_long() + 1) & masks[0].as_long() == 0:
                m = masks[0].as_long()
                i = 1 if z3.is_bv_value(kids[0]) else 0
                return (args[i] if his[i] <= m else args[i] % (m + 1)), min(his[i], m)
            raise Untranslatable("a bitwise and")
        if k == z3.Z3_OP_ITE:
            return z3.If(*args), max(his[1], his[2])
        raise Untranslatable(f"the operation {t.decl().name()}")


_SIGNED = {z3.Z3_OP_SLT: lambda a, b: a < b, z3.Z3_OP_SLEQ: lambda a, b: a <= b,
           z3.Z3_OP_SGT: lambda a, b: a > b, z3.Z3_OP_SGEQ: lambda a, b: a >= b}


def bounds_of(ctx) -> dict:
    """Upper bounds of the context's variables, product atoms and routing values, read off
    their facts (`x < c`); remembered per number of facts."""
    memo = ctx.__dict__.setdefault("_bounds_memo", {})
    if len(ctx.facts) not in memo:
        memo.clear()
        memo[len(ctx.facts)] = _bounds(ctx)
    return memo[len(ctx.facts)]


def _bounds(ctx) -> dict:
    out = {}
    for f in ctx.facts:
        if z3.is_app_of(f, z3.Z3_OP_ULT):
            x, c = f.children()
            if z3.is_bv_value(c) and c.as_long() > 0 and _leaf(x):
                k = key(x)
                out[k] = min(out.get(k, c.as_long() - 1), c.as_long() - 1)
    return out


def _leaf(x) -> bool:
    """A variable, or a routing value at a constant coordinate (counts(3))."""
    if z3.is_bv_value(x):
        return False
    if z3.is_const(x):
        return True
    return x.decl().kind() == z3.Z3_OP_UNINTERPRETED and all(
        z3.is_bv_value(a) for a in x.children())


def check(facts, goal, bounds=None, timeout_ms: int = TIMEOUT_MS, exact: bool = False):
    """sat / unsat / unknown of facts & goal in integers; facts that do not translate are
    left out (fewer facts: an unsat answer still holds, a sat one may not), or, `exact`,
    raise Untranslatable as the goal does (then a sat answer is as good as one of the
    bit-vector query)."""
    tr = Translator(bounds)
    g = tr.term(goal)
    kept = []
    for f in facts:
        try:
            kept.append(tr.term(f))
        except Untranslatable:
            if exact:
                raise
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    s.add(*tr.ranges, *kept, g)
    return s.check()


def _cache(ctx) -> dict:
    """The context's translator and its translated facts, renewed when new facts bring new
    bounds (translations are kept while the bounds stay the same)."""
    bounds = bounds_of(ctx)
    cache = ctx.__dict__.setdefault("_integers", {})
    if not cache:
        cache.update(bounds=bounds, translator=Translator(bounds), facts={})
    elif cache["bounds"] != bounds:
        # new facts brought new bounds: terms translated before keep their translation
        # (exact under any bounds: a looser bound only keeps a modulo that a tighter one
        # drops), terms translated from now on use the new ones
        cache["bounds"] = bounds
        cache["translator"].bounds = dict(bounds)
    return cache


def translator_of(ctx) -> Translator:
    return _cache(ctx)["translator"]


def unsat_in(ctx, facts, goal, own: dict | None = None) -> bool:
    """facts & goal impossible, shown in integers with the context's translator (the
    facts recur in every query: each is translated once); a fact that does not translate
    is left out. `own`: bounds the query puts on fresh variables of its own, translated
    afresh with them. Raises Untranslatable when the goal does not translate."""
    return solve_in(ctx, facts, goal, own)[0] == z3.unsat


def solve_in(ctx, facts, goal, own: dict | None = None):
    """unsat_in's query: (z3's answer, the integer solver, the translator, the translated
    formulas asked), for a caller that reads the model of a sat answer
    (integer_models.py)."""
    cache = _cache(ctx)
    tr, done = cache["translator"], cache["facts"]
    if own:
        tr, done = Translator({**tr.bounds, **own}), {}
    g = tr.term(goal)
    kept = []
    for f in facts:
        got = done.get(f.get_id())
        if got is None:
            try:
                got = done[f.get_id()] = (f, tr.term(f))
            except Untranslatable:
                got = done[f.get_id()] = (f, None)
        if got[1] is not None:
            kept.append(got[1])
    s = z3.Solver()
    s.set("timeout", TIMEOUT_MS)
    s.add(*tr.ranges_for([*kept, g]), *kept, g)
    return s.check(), s, tr, [*kept, g]


def proves(facts, claim, bounds=None) -> bool:
    """claim holds under facts, proved in integers (False: not proved this way)."""
    try:
        return check(facts, z3.Not(claim), bounds) == z3.unsat
    except Untranslatable:
        return False
