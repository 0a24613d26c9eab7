"""Masks: select(keep, x, -inf) on a score tile, the mask's specification, and the blocks a
masked loop visits.

- `select(keep, x, -inf)` (keep a predicate fragment, indices.py) makes a new Series whose
  elements outside keep are -inf, so exp2 makes them 0.
- `tag_assert(keep == <predicate of tag(x).row, tag(x).col>)` both checks the mask (for
  every element of every visited block) and, once proved, *specifies* it as a function
  of (query, key) for every key, visited or not: keys.py then proves that every key the
  specification keeps is accumulated (so the blocks the loop skips are fully masked).
- At p = exp2(x - m): every row has an unmasked key in the first block the loop visits
  (else its max is -inf there and exp2(-inf - (-inf)) is NaN). The columns of the block
  are ENUMERATED (one conjunct per column).
- After the walk (`visited_blocks`): no block the loop visits is fully masked for every
  row of every warpgroup of the role (the loop would do a block of work that adds
  nothing; "exactly the fully masked blocks are skipped"), proved with a z3 quantifier
  over the rows and columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import z3

from argus.ir import tagexpr as T
from argus.ir.nodes import Loc, Op
from argus.verify.finding import Counterexample, Finding
from argus.verify.smt import TIMEOUT_MS, bv, value

from . import asserts, scalars, symmetric
from .meaning import PredVal, Series, state, subst
from .values import Fragment
from .violations import label, refute


@dataclass
class MaskRecord:
    """One walk's mask of a loop: keep over (pr, pc) and the scope, the tile's size."""
    loop: str
    keep: object
    rows: int
    cols: int
    path: tuple
    loc: Loc
    warpgroup: int | None


def select(w, op: Op) -> bool:
    """select(keep, x, -inf) (or select(keep, -inf, x)) on a score tile; False otherwise."""
    from .softmax import consume, innermost_loop
    cond, a, b = (w.value(op.arg(n)) for n in ("cond", "a", "b"))
    if not (isinstance(cond, Fragment) and isinstance(cond.tag.meaning, PredVal)):
        return False
    keep = cond.tag.meaning
    if _neg_inf(b) and isinstance(a, Fragment) and len(a.shape) == 2:
        x, term, xi = a, keep.term, "a"
    elif _neg_inf(a) and isinstance(b, Fragment) and len(b.shape) == 2:
        x, term, xi = b, z3.Not(keep.term), "b"
    else:
        w.not_modelled(op, "select other than masking a score tile with -inf")
        w.env[op.result] = Fragment(tuple(op.result.type.shape), op.result.type.layout,
                                    _unknown_tag("a select that is not a -inf mask"), op.loc)
        return True
    if x.tag.state != "data" or "row" not in x.tag.fields:
        w.env[op.result] = Fragment(tuple(op.result.type.shape), op.result.type.layout,
                                    x.tag.copy(), op.loc)
        return True
    from .softmax import real_of, recipe
    consume(w, x, op, label(op.arg(xi)))
    loop, block = innermost_loop(w)
    real = (x.tag.meaning.real_row, x.tag.meaning.real_col) \
        if isinstance(x.tag.meaning, Series) else real_of(x)
    pred = keep if xi == "a" else PredVal(term, keep.loc)
    if xi == "b" and keep.spec is not None:
        pred.spec = lambda q, k, f=keep.spec: z3.Not(f(q, k))
        pred.spec_tags = keep.spec_tags
    series = Series(label(op.result), op.loc, loop, block, dict(x.tag.fields), x.shape[0],
                    x.shape[1], x.layout, pred, *real, recipe(w, op.arg(xi)))
    tag = x.tag.copy()
    tag.meaning, tag.contributions = series, []
    w.env[op.result] = Fragment(tuple(op.result.type.shape), op.result.type.layout, tag, op.loc)
    if loop is not None:
        state(w).masks.append(MaskRecord(loop, term, x.shape[0], x.shape[1], tuple(w.path),
                                         op.loc, w.role.warpgroup if w.role else None))
    return True


def real_keys(w, op: Op, series: Series) -> bool:
    """A reduction of a score tile (row max or sum) reads only keys of the row's own head:
    in every real row, a column whose key is not real (past the head's keys: the next
    head's rows, or TMA zeros past the tensor) is masked to -inf. False when reported."""
    if series.real_col is None:
        return True
    row = series.real_row if series.real_row is not None else z3.BoolVal(True)
    kept = series.mask.term if series.mask is not None else z3.BoolVal(True)
    bad = z3.And(row, z3.Not(series.real_col), kept)
    what = "is not masked" if series.mask is not None else "is read unmasked"
    return refute(
        w, op, "tag.mask-keys", bad, layout=series.layout, rows=series.rows,
        cols=series.cols,
        message=lambda m, inst: (
            f"{series.name}[{value(m, w.pos['pr'])}, {value(m, w.pos['pc'])}] holds a "
            f"column whose key is not a real key of its row (past the end of the keys' "
            f"tensor, where TMA reads zeros, or past the head's segment of it, where it "
            f"reads the next head's keys), and it {what}: the row's max and sum include it"),
        hint="mask the keys past the last one (select(col_of(s) + j * BN < SK, s, -inf)), "
             "or run the unmasked loop only over blocks of whole keys") is None


def _neg_inf(x) -> bool:
    return isinstance(x, float) and math.isinf(x) and x < 0


def _unknown_tag(why):
    from .values import FragTag
    return FragTag("unknown", why_unknown=why)


# -- the specification: tag_assert(keep == predicate of tags) -------------------------------
def tag_assert(w, op: Op) -> None:
    """asserts.tag_assert; a proved `pred == <tags>` also specifies the mask `pred`."""
    before = len(w.findings)
    asserts.tag_assert(w, op)
    if w.phase != "check" or len(w.findings) != before:
        return
    pred = op.attrs["pred"]
    if not (isinstance(pred, T.BinExpr) and pred.op == "=="):
        return
    for value_side, spec_side in ((pred.lhs, pred.rhs), (pred.rhs, pred.lhs)):
        if not isinstance(value_side, T.ValueOf):
            continue
        frag = w.value(op.args("values")[value_side.operand])
        if not (isinstance(frag, Fragment) and isinstance(frag.tag.meaning, PredVal)):
            continue
        fn = _spec(w, op, spec_side)
        if fn is None:
            continue
        tile = w.value(op.args("values")[next(iter(_tiles(w, op, spec_side)))])
        if {"row", "col"} <= tile.tag.fields.keys():
            frag.tag.meaning.spec = fn
            frag.tag.meaning.spec_text = op.attrs.get("text", "")
            frag.tag.meaning.spec_tags = (tile.tag.fields["row"], tile.tag.fields["col"])


def _tiles(w, op, e) -> set:
    values = op.args("values")       # the tag expression's operand i is values[i]
    return {i for i in T.operands_of(e) if isinstance(w.value(values[i]), Fragment)}


def _spec(w, op, e):
    """The predicate as a function of (row, col) of one fragment's tag, or None when it
    names anything else that varies (coordinates, other fields, other fragments)."""
    if len(_tiles(w, op, e)) != 1:
        return None

    def render(node, q, k):
        if isinstance(node, T.Const):
            return node.value
        if isinstance(node, T.TagField) and node.field in ("row", "col"):
            return q if node.field == "row" else k
        if isinstance(node, T.ScalarRef):
            v = w.value(op.args("values")[node.operand])
            if v is None or isinstance(v, (Fragment, float)):
                raise ValueError
            return v
        if isinstance(node, T.BinExpr):
            name = {"+": "add", "-": "sub", "*": "mul", "//": "floordiv", "%": "mod",
                    "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge",
                    "and": "land", "or": "lor"}[node.op]
            return scalars.binary(w.ctx, name, render(node.lhs, q, k), render(node.rhs, q, k))
        raise ValueError

    try:
        render(e, z3.BitVec("q", 64), z3.BitVec("k", 64))
    except (ValueError, scalars.ScalarError, TypeError):
        return None
    return lambda q, k: scalars.as_bool(render(e, q, k))


# -- the first block: no row without a key ---------------------------------------------------
def first_block(w, op: Op, x: Fragment, series: Series, ref) -> None:
    """p = exp2(x - m): every row has an unmasked key in the first block m summarises."""
    if series.mask is None:
        return
    pairs = []
    if series.loop is not None and ref.span.loop == series.loop and \
            not isinstance(series.block, int):
        pairs = [(bv(series.block), bv(ref.span.lo))]
    pc = w.pos["pc"]
    none = z3.And(*[z3.Not(subst(series.mask.term, [*pairs, (pc, bv(c))]))
                    for c in range(series.cols)])
    row = series.fields["row"]
    refute(w, op, "tag.mask-block", none, layout=f"rows({x.layout})", rows=series.rows,
           message=lambda m, inst: (
               f"p = exp2(x - m) with m = {ref.describe(m)}: row "
               f"{value(m, inst(bv(row)))} has no unmasked key in block "
               f"{value(m, ref.span.lo)}, the first block m covers, so m is -inf there and "
               f"exp2(-inf - (-inf)) is NaN, which reaches the row sum and the output"),
           hint="visit first a block where every row keeps a key (for a causal mask: key "
                "block 0 first), and carry the running max over the blocks")


# -- after the walk: the visited blocks ----------------------------------------------------
def visited_blocks(w) -> None:
    """No visited block is fully masked for every row of every walk of its loop."""
    st = state(w)
    by_loop: dict[str, list[MaskRecord]] = {}
    for rec in st.masks:
        # a walk for every warpgroup at once (symmetric.py) records one mask: each
        # warpgroup's is an instance of it, and the block must be dead for all of them
        for pairs in symmetric.per_warpgroup(w, [rec.keep, *rec.path]):
            one = rec if not pairs else replace(
                rec, keep=z3.substitute(rec.keep, *pairs),
                path=tuple(z3.substitute(p, *pairs) for p in rec.path))
            by_loop.setdefault(rec.loop, []).append(one)
    for loop, recs in by_loop.items():
        pr, pc = w.pos["pr"], w.pos["pc"]
        if _alive_at_corners(w, recs):
            continue
        dead = []
        for rec in recs:
            r, c = z3.BitVec(f"r#{len(dead)}", 64), z3.BitVec(f"c#{len(dead)}", 64)
            keep = z3.substitute(rec.keep, (pr, r), (pc, c))
            dead.append(z3.ForAll([r, c], z3.Implies(z3.And(z3.ULT(r, rec.rows),
                                                            z3.ULT(c, rec.cols)),
                                                     z3.Not(keep))))
            dead += list(rec.path)
        s = z3.Solver()
        s.set("timeout", TIMEOUT_MS)
        s.add(*w.ctx.facts, *w.ctx.product_facts(), *dead)
        result = s.check()
        if result == z3.unsat:
            continue
        op = st.loop_ops.get(loop)
        loc = op.loc if op is not None else recs[0].loc
        if result != z3.sat:
            w.findings.append(Finding(
                "tag.undecided", "warning", "z3 could not decide whether the loop visits a "
                "fully masked block; not verified", loc, "for",
                "write the loop bound and the mask as affine expressions of the block ids"))
            continue
        ordered = [w.ctx.vars[n].term for n in ("block", *[v for v in w.ctx.vars
                                                             if v.startswith("block_")], loop)
                   if n in w.ctx.vars] + list(w.sizes.values())
        report_least(s, ordered)
        model = s.model()
        ids = tuple(value(model, w.ctx.vars[n].term) for n in w.ctx.vars if n.startswith("block_"))
        j = value(model, w.ctx.vars[loop].term)
        sizes = {n: value(model, t) for n, t in w.sizes.items()}
        name = w.ctx.vars[loop].name
        w.findings.append(Finding(
            "tag.mask-block", "error",
            f"the loop visits block {name}={j}, whose keys are all masked for every row of "
            f"the block (every warpgroup): it does a block of work that adds nothing; the "
            f"loop must skip exactly the fully masked blocks", loc, "for",
            "stop the loop at the last block with an unmasked key (causal: the block of the "
            "diagonal)",
            Counterexample(block=ids or None, iteration={name: j}, sizes=sizes)))


def _alive_at_corners(w, recs) -> bool:
    """A cheap sufficient condition (no quantifier): on every path some walk keeps the key
    of a corner of its tile (first or last row, first or last column), so no visited block
    is fully masked. False when that is not proved (the quantified query decides)."""
    from argus.verify.smt import confined, integer_unsat, relevant, solve
    pr, pc = w.pos["pr"], w.pos["pc"]
    dead = []
    for rec in recs:
        for r in {0, rec.rows - 1}:
            for c in {0, rec.cols - 1}:
                dead.append(z3.Not(z3.substitute(rec.keep, (pr, z3.BitVecVal(r, 64)),
                                                 (pc, z3.BitVecVal(c, 64)))))
        dead += list(rec.path)
    every = [*w.ctx.facts, *w.ctx.product_facts()]
    if integer_unsat(w.ctx, relevant(every, dead), z3.And(*dead)):
        return True
    if solve([*confined(every, dead), *dead])[0] == z3.unsat:
        return True
    return solve([*relevant(every, dead), *dead])[0] == z3.unsat


def report_least(s, order) -> None:
    from argus.verify.smt import least
    least(s, order)
