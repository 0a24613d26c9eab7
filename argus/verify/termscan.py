"""One walk over a z3 term for what the solver layer needs to know of it: its variables (the
uninterpreted constants: sizes, counters, product atoms), its remainders `x % c` by
constants that are not powers of two (smt.mod_lemmas) and its divisions `x // d`, `x % d`
by anything but a power of two (smt.without_divisions).

Facts recur in every query and share most of their subterms, so each subterm is scanned
once and its answer kept (by AST id). The walk reads the AST through z3's C API (ids,
kinds, argument pointers): building a Python wrapper for every node, as `children()`
does, cost more than the rest of the query's preparation. A wrapper is made only for the
few subterms an answer returns.
"""

from __future__ import annotations

from dataclasses import dataclass

import z3
from z3.z3 import _to_expr_ref

MEMO_LIMIT = 400_000      # subterms remembered before the memo starts afresh

_DIVS = (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I, z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I)
_QUOTIENTS = _DIVS[:2]
_UREM = _DIVS[2:]
_EMPTY: frozenset = frozenset()


@dataclass(frozen=True)
class Scan:
    """What a term contains. `variables`: AST ids of its uninterpreted constants;
    `remainders`: AST id -> its x % c terms (c a constant above 1, not a power of two);
    `divisions`: (x id, d id) -> (x // d or None, x % d or None), d not a power of two;
    `routed`: it applies an uninterpreted function (a routing value such as counts(e))."""
    variables: frozenset
    remainders: dict
    divisions: dict
    routed: bool = False


_NONE = Scan(_EMPTY, {}, {})
_NAMES: dict[int, str] = {}        # AST id of a variable -> its name
_MEMO: dict[int, Scan] = {}        # AST id -> its scan
_ROOTS: list = []                  # the scanned terms, alive so that their ids stay theirs


def scan(t) -> Scan:
    """The scan of term t (memoised with every subterm's)."""
    t = t if z3.is_expr(t) else z3.BoolVal(bool(t))
    return _bottom_up(t, _MEMO, _ROOTS, lambda c, a, k: None, _combine, also=_NAMES)


def _bottom_up(t, memo: dict, roots: list, leaf, combine, also: dict | None = None):
    """The answer for term t of a fold over its AST, each subterm's answer kept in `memo`
    by AST id (the terms kept alive in `roots`, so that their ids stay theirs; every memo
    starts afresh past MEMO_LIMIT entries, `also` with it). `leaf(c, a, id)` answers for a
    node without looking at its arguments (None: fold them); `combine(ctx, c, a, kids)`
    answers from its arguments' (pointer, id) pairs, whose answers are in `memo`."""
    ctx = t.ctx
    c = ctx.ref()
    root = t.as_ast()
    ident = z3.Z3_get_ast_id(c, root)
    got = memo.get(ident)
    if got is not None:
        return got
    if len(memo) >= MEMO_LIMIT:
        memo.clear()
        roots.clear()
        if also is not None:
            also.clear()
    roots.append(t)
    stack = [(root, ident, None)]
    while stack:
        a, k, kids = stack.pop()
        if k in memo:
            continue
        if kids is None:
            early = leaf(c, a, k)
            if early is not None:
                memo[k] = early
                continue
            kids = _arguments(c, a)
            pending = [(x, i) for x, i in kids if i not in memo]
            if pending:
                stack.append((a, k, kids))
                stack.extend((x, i, None) for x, i in pending)
                continue
        memo[k] = combine(ctx, c, a, kids)
    return memo[ident]


def names(t) -> frozenset:
    """The names of the variables of t."""
    return frozenset(_NAMES[i] for i in scan(t).variables)


_LEAVES: dict[int, frozenset] = {}    # AST id -> ids of its leaves (leaves() below)
_LEAF_ROOTS: list = []


def leaves(t) -> frozenset:
    """The AST ids of what t is built from: its variables and its applications of
    uninterpreted functions (a routing value such as counts(e), kept whole), memoised with
    every subterm's (the windows of one prefix sum share every entry's sum)."""
    return _bottom_up(t, _LEAVES, _LEAF_ROOTS, _uninterpreted_leaf,
                      lambda ctx, c, a, kids: frozenset().union(*[_LEAVES[i] for _, i in kids])
                      if kids else _EMPTY)


def _uninterpreted_leaf(c, a, ident):
    """{a} for a variable or an application of an uninterpreted function, else None."""
    if z3.Z3_get_ast_kind(c, a) == z3.Z3_APP_AST and z3.Z3_get_decl_kind(
            c, z3.Z3_get_app_decl(c, z3.Z3_to_app(c, a))) == z3.Z3_OP_UNINTERPRETED:
        return frozenset([ident])
    return None


def larger_than(t, limit: int) -> bool:
    """t has more than `limit` distinct subterms (counted up to limit + 1, not all)."""
    c = t.ctx.ref()
    root = t.as_ast()
    seen = {z3.Z3_get_ast_id(c, root)}
    todo = [root]
    while todo:
        for x, ident in _arguments(c, todo.pop()):
            if ident not in seen:
                seen.add(ident)
                if len(seen) > limit:
                    return True
                todo.append(x)
    return False


def _arguments(c, a) -> list:
    """(pointer, id) of each argument of an application, or of a quantifier's body; []
    for anything else."""
    kind = z3.Z3_get_ast_kind(c, a)
    if kind == z3.Z3_QUANTIFIER_AST:
        body = z3.Z3_get_quantifier_body(c, a)
        return [(body, z3.Z3_get_ast_id(c, body))]
    if kind != z3.Z3_APP_AST:
        return []
    app = z3.Z3_to_app(c, a)
    out = []
    for i in range(z3.Z3_get_app_num_args(c, app)):
        x = z3.Z3_get_app_arg(c, app, i)
        out.append((x, z3.Z3_get_ast_id(c, x)))
    return out


def _combine(ctx, c, a, kids) -> Scan:
    kind = z3.Z3_get_ast_kind(c, a)
    if kind not in (z3.Z3_APP_AST, z3.Z3_QUANTIFIER_AST):
        return _NONE
    if kind == z3.Z3_QUANTIFIER_AST:
        return _MEMO[kids[0][1]]
    decl_kind = z3.Z3_get_decl_kind(c, z3.Z3_get_app_decl(c, z3.Z3_to_app(c, a)))
    if not kids:
        if decl_kind == z3.Z3_OP_UNINTERPRETED:
            ident = z3.Z3_get_ast_id(c, a)
            decl = z3.Z3_get_app_decl(c, z3.Z3_to_app(c, a))
            _NAMES[ident] = z3.Z3_get_symbol_string(c, z3.Z3_get_decl_name(c, decl))
            return Scan(frozenset([ident]), {}, {})
        return _NONE
    parts = [_MEMO[i] for _, i in kids]
    variables = _EMPTY
    remainders: dict = {}
    divisions: dict = {}
    routed = decl_kind == z3.Z3_OP_UNINTERPRETED
    for p in parts:
        routed = routed or p.routed
        if p.variables and p.variables is not variables:
            variables = p.variables if not variables else variables | p.variables
        if p.remainders:
            remainders = {**remainders, **p.remainders}
        if p.divisions:
            for key, (q, r) in p.divisions.items():
                q0, r0 = divisions.get(key, (None, None))
                divisions[key] = (q0 if q0 is not None else q, r0 if r0 is not None else r)
    if decl_kind in _DIVS and len(kids) == 2:
        d = _constant(c, kids[1][0])
        if d is None or d <= 0 or d & (d - 1):          # not a power of two
            term = _to_expr_ref(a, ctx)
            key = (kids[0][1], kids[1][1])
            q0, r0 = divisions.get(key, (None, None))
            if decl_kind in _QUOTIENTS:
                divisions[key] = (q0 if q0 is not None else term, r0)
            else:
                divisions[key] = (q0, r0 if r0 is not None else term)
                if decl_kind in _UREM and d is not None and d > 1:
                    remainders = {**remainders, z3.Z3_get_ast_id(c, a): term}
    if not variables and not remainders and not divisions and not routed:
        return _NONE
    return Scan(variables, remainders, divisions, routed)


def _constant(c, a):
    """The value of a bit-vector numeral, else None."""
    if z3.Z3_get_ast_kind(c, a) != z3.Z3_NUMERAL_AST:
        return None
    return int(z3.Z3_get_numeral_string(c, a))


def products_reached(atoms: dict, formulas) -> list:
    """(atom, x, y) of every product atom of `atoms` (a context's: id -> (atom, a, b)) that
    the formulas mention, and of the atoms inside those atoms' factors (x, y as terms)."""
    from argus.verify.arith import bv

    ids = set()
    for f in formulas:
        ids |= scan(f).variables
    out, seen, grew = [], set(), True
    while grew:
        grew = False
        for atom, a, b in atoms.values():
            k = atom.get_id()
            if k in ids and k not in seen:
                x, y = bv(a), bv(b)
                seen.add(k)
                out.append((atom, x, y))
                ids |= scan(x).variables | scan(y).variables
                grew = True
    return out
