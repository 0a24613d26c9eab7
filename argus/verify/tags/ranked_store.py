"""The contract of a stored selection (ranked.py): what a top-k router's outputs must be.

A 1-D store of a Pick (the column of rank k) or a Weight (the softmax weight of rank k,
normalised over the n first) is proved when the destination's elements carry the routing
fields the router's layout assumes (`assume(tag(experts_j).token == ... and
tag(experts_j).choice == j)`, assumptions.py) and, at every element the store writes:

  1. the value's row is the destination's token (its `token` field, which the loads
     carry from the data tensor's assumption);
  2. its rank is the destination's `choice`;
  3. for a Weight, the destination states `norm` (the number of largest entries the
     weights are normalised over: k to renormalise, the row's length for the plain
     softmax probabilities) and the denominator sums that many;
  4. the rank is below the row's length (and n is at most it);
  5. the order is the top-k's: the largest first, the lowest column among equal entries
     (a NumPy stable argsort of -x, torch.topk's order).

Then what is stored at entry (choice j, token t) is the j-th largest entry's column of row
t of the data (or its weight): the value relates to the data as the reference does.
A failure is a `tag.value` error whose counterexample carries, besides the element, a data
row (`inputs`) on which the kernel's value and the reference's differ there (found by
running both orders on a few small rows). A destination without those fields proves
nothing (the store stays unproved, origin.py)."""

from __future__ import annotations

import math
from dataclasses import replace

import z3

from argus.ir.nodes import Op
from argus.verify.finding import Finding
from argus.verify.smt import bv, holds, value

from . import assumptions, proved, report, segments
from . import ranked as R
from .values import Fragment, GlobalTile


def store(w, op: Op, base) -> None:
    base(w, op)
    if w.phase != "check":
        return
    dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
    if not isinstance(dst, GlobalTile) or len(dst.box) != 1 or not isinstance(src, Fragment):
        return
    m = R.meaning(src)
    if not isinstance(m, (R.Pick, R.Weight)) or len(src.shape) != 1:
        if "choice" in assumptions.fields(w, dst.tensor) and src.tag.state == "data":
            _not_a_selection(w, op, dst, "is not a selection the top-k idiom proves (the "
                             "column of a rank, or its softmax weight)")
        return
    names = assumptions.fields(w, dst.tensor)
    if isinstance(m, R.Pick) and "norm" in names:
        _not_a_selection(w, op, dst, "is a column index, but the destination states `norm` "
                         "(it holds weights)")
        return
    if check(w, op, dst, src, m):
        proved.mark(w, op)


def _not_a_selection(w, op: Op, dst: GlobalTile, why: str) -> None:
    """A store of data into a router output (its layout names a routing `choice`) that the
    top-k contract does not prove: unverified, said (its value may be anything computed
    from the data, where the layout promises the choice of a rank)."""
    w.findings.append(Finding(
        "tag.value-unproved", "warning",
        f"{dst.tensor} states a routing choice for each entry (its layout's `choice` field), "
        f"but the value stored here {why}; what this writes is not verified", op.loc, "store",
        "store round j's column, -row_max(-select(rest == m, col, E)), or its weight "
        "exp2((m_j - max) * LOG2E) / denominator, at choice j"))


def check(w, op: Op, dst: GlobalTile, src: Fragment, m) -> bool:
    """The contract (the module's 1-5) at every element the store writes: True when it
    holds; False when it does not (an error or a warning reported here) or cannot be
    stated (no routing fields: origin.py then says the value is unproved)."""
    names = assumptions.fields(w, dst.tensor)
    need = ("token", "choice", "norm") if isinstance(m, R.Weight) else ("token", "choice")
    if any(n not in names for n in need) or src.tag.state != "data" \
            or "token" not in src.tag.fields:
        return False
    pr = w.pos["pr"]
    row = bv(dst.origin[0]) + pr
    field = {n: _field(w, dst, n, row) for n in need}
    bounds = [z3.ULT(pr, src.shape[0])]
    into = segments.inside(dst, [row], w)
    rank = bv(m.k)
    n = m.row.ncols
    wants = [("token", bv(src.tag.fields["token"]), field["token"]),
             ("choice", rank, field["choice"])]
    if isinstance(m, R.Weight):
        wants.append(("norm", bv(m.n), field["norm"]))
    for what, got, want in wants:
        claim = z3.Implies(into, got == want)
        if not holds(w.ctx, claim, [*w.path, *bounds]):
            _report(w, op, dst, src, m, z3.Not(claim), what, (got, want))
            return False
    size = [z3.ULT(rank, n)] + ([z3.ULE(bv(m.n), n)] if isinstance(m, R.Weight) else [])
    if not holds(w.ctx, z3.Implies(into, z3.And(*size)), [*w.path, *bounds], in_integers=True):
        w.findings.append(Finding(
            "tag.value-unproved", "warning",
            f"the rank of this selection may reach the row's length {n}: a round past the "
            f"last entry picks a column already chosen; what this writes is not verified",
            op.loc, "store", "select at most as many entries as the row has"))
        return False
    if isinstance(m, R.Pick) and (m.sign != 1 or m.tie != "low"):
        _report(w, op, dst, src, m, into, "order", None)
        return False
    return True


def _field(w, dst: GlobalTile, name: str, row):
    """The destination's field at `row`: the value of the assumption's instance on the
    tile's segment when the assumption is one over a family of windows (no if-then-else
    over the other instances), else the field (assumptions.field)."""
    got = assumptions.on_window(w, dst.tensor, name, dst.window, [row])
    return got if got is not None else assumptions.field(w, dst.tensor, name, [row])


def _report(w, op, dst, src, m, goal, what, terms) -> None:
    scope = w.scope_vars()
    pr = w.pos["pr"]
    into = segments.inside(dst, [bv(dst.origin[0]) + pr], w)
    model = report.find(w, z3.And(goal, into), scope, [z3.ULT(pr, src.shape[0])])
    if model is None:
        return
    q = bv(dst.origin[0]) + pr
    token = value(model, assumptions.field(w, dst.tensor, "token", [q]))
    choice = value(model, assumptions.field(w, dst.tensor, "choice", [q]))
    rank = value(model, bv(m.k))
    norm = value(model, assumptions.field(w, dst.tensor, "norm", [q])) \
        if isinstance(m, R.Weight) else None
    got_n = value(model, bv(m.n)) if isinstance(m, R.Weight) else None
    row = witness(m, rank, choice, got_n, norm)
    ncols = m.row.ncols
    actual = {"rank": rank, "order": _order(m)}
    expected = {"choice": choice, "order": "largest first, lowest column among equal"}
    if isinstance(m, R.Weight):
        actual["normalised over"], expected["norm"] = got_n, norm
    if what == "token":
        actual["token"], expected["token"] = value(model, terms[0]), value(model, terms[1])
    cex = report.counterexample(w, model, scope, elements=(report.element(
        model, dst.tensor, (q,), {}, {}),))
    element = replace(cex.elements[0], actual=actual, expected=expected)
    inputs = {m.row.tensor: {token * ncols + c: x for c, x in enumerate(row)}} \
        if row is not None else {}
    cex = replace(cex, elements=(element,), inputs=inputs)
    why = {"token": "a row of another token",
           "choice": f"the choice of rank {rank} where entry {value(model, q)} holds choice "
                     f"{choice}",
           "norm": f"weights normalised over the {got_n} largest where the destination "
                   f"states {norm}",
           "order": f"{R.describe(m)}, not the top-k's order (the largest first, the "
                    f"lowest column among equal entries)"}[what]
    w.report(Finding(
        "tag.value", "error",
        f"the value stored into {dst.tensor}[{value(model, q)}] (token {token}, choice "
        f"{choice}) is {why}" + (f"; on the data row {row} of token {token} the reference "
                                 f"differs" if row is not None else ""),
        op.loc, "store", "select by row_max of what is left, the lowest column among "
        "equal entries (-row_max(-select(rest == m, col, E))), and store round j at choice j",
        cex))


def _order(m) -> str:
    if not isinstance(m, R.Pick):
        return "largest first"
    return (f"{'largest' if m.sign > 0 else 'smallest'} first, "
            f"{m.tie}est column among equal")


def ranks(row, sign: int, tie: str) -> list[int]:
    """The columns of a data row in a selection's rank order."""
    return sorted(range(len(row)), key=lambda c: (-sign * row[c], c if tie == "low" else -c))


def computed(m, row, rank: int, n):
    """What the kernel's meaning `m` computes on the data row, at rank `rank`."""
    if isinstance(m, R.Pick):
        return ranks(row, m.sign, m.tie)[rank]
    order = ranks(row, 1, "low")
    top = max(row)
    return math.exp(row[order[rank]] - top) / sum(math.exp(row[c] - top) for c in order[:n])


def witness(m, rank: int, choice: int, got_n, norm):
    """A small data row on which the kernel's value differs from the reference's (the
    choice-th largest entry's column, or its weight normalised over `norm`), or None."""
    e = m.row.ncols
    rows = [[0.0] * e, [float(c) for c in range(e)], [float(e - c) for c in range(e)],
            [1.0] + [0.0] * (e - 1), [0.0] * (e - 1) + [1.0]]
    for row in rows:
        try:
            if isinstance(m, R.Pick):
                got, want = computed(m, row, rank, None), ranks(row, 1, "low")[choice]
            else:
                ref = R.Weight(m.row, choice, norm)
                got, want = computed(m, row, rank, got_n), computed(ref, row, choice, norm)
        except (IndexError, ZeroDivisionError, TypeError):
            continue
        if (got != want) if isinstance(m, R.Pick) else abs(got - want) > 1e-3 * abs(want):
            return row
    return None
