"""Loop-carried softmax state, by induction over the loop counter j.

The walker walks a loop body once with a symbolic j. A fragment declared before the loop
and assigned a computed value in its body (m_i, l_i, o_acc) is *carried*: the body reads
the value of the previous iteration. In a loop that carries a row vector initialised to
-inf (a running max), each carried fragment starts the body from a hypothesis about
iteration j:

  row vector, init -inf   m = the max of the score tile S over blocks [start, j)
  row vector, init 0      l = the sum of exp2(S - m) over blocks [start, j), m as above
  tile, init 0            o = the sum of P V over blocks [start, j), P relative to m

where S and the row are Holes fixed by their first use in the body (meaning.py). At the
end of the body the value assigned must be the hypothesis for j + 1, for every j below
the trip count (z3, with the row and the blocks symbolic: a block with no unmasked key
in the row changes nothing); at j = start the hypothesis is the initial value (-inf, 0).
So the hypothesis holds at every iteration, and after the loop the fragment holds it for
j = stop. Every use of the carried value inside the body was checked against the
hypothesis, so a rescale with the wrong max or a missing update is found where it
happens. Other carried fragments (and carried values in loops without a running max) are
left as the walker treats them; fragments of the softmax loop that fit no hypothesis are
reported as not modelled."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import z3

from argus.ir.nodes import Op, Value
from argus.verify.smt import below, bv, holds

from .meaning import (Hole, Series, SoftAcc, Span, Stat, differs, resolve, row_differs,
                      span_same, span_text, state, subst)
from .values import FragTag, Fragment
from .violations import label, refute


@dataclass
class Entry:
    value: Value
    frag: Fragment
    hypothesis: FragTag
    before: FragTag | None = None     # a later part of a split loop: the value it enters with


@dataclass
class LoopFrame:
    name: str
    start: object
    stop: object
    entries: list = field(default_factory=list)


WRITTEN = {"frag.assign": "dst", "wgmma.mma": "acc"}     # the fragment each op writes


def _carried(w, body) -> list[tuple[Value, Fragment]]:
    """Fragments defined before the loop that its body assigns a computed value, or
    accumulates into with a wgmma without resetting them first."""
    seen, out, reset = set(), [], set()
    for op in body.ops:                     # in order: a reset before the first use
        if op.opcode == "frag.assign" and not isinstance(op.arg("src"), Value):
            if id(w.value(op.arg("dst"))) not in seen:
                reset.add(id(w.value(op.arg("dst"))))
            continue
        if op.opcode == "frag.assign" and hasattr(op.arg("src").type, "layout"):
            dst = op.arg("dst")
        elif op.opcode == "wgmma.mma":
            dst = op.arg("acc")
        else:
            continue
        frag = w.value(dst)
        if isinstance(frag, Fragment) and id(frag) not in seen and id(frag) not in reset:
            seen.add(id(frag))
            out.append((dst, frag))
    return out


def _assigned_in_regions(w, body, carried: set) -> list[tuple[Value, Fragment]]:
    """Carried fragments (and running maxima) that ops inside nested regions (if,
    elect_one, inner loops) of the body assign or accumulate into (not modelled: the
    walker does not merge the branches of an if)."""
    from argus.ir.nodes import walk
    out = []
    for top in body.ops:
        for region in top.regions:
            for op in walk(region):
                if op.opcode in WRITTEN:
                    dst = op.arg(WRITTEN[op.opcode])
                    frag = w.value(dst)
                    if isinstance(frag, Fragment) and (id(frag) in carried or
                                                       _running_max(frag)):
                        out.append((dst, frag))
    return out


def _reads_running_max(w, body) -> bool:
    """The body reads a row vector that starts at -inf (a running max)."""
    from argus.ir.nodes import walk
    for op in walk(body):
        for o in op.operands:
            f = w.value(o) if isinstance(o, Value) else None
            if isinstance(f, Fragment) and _running_max(f):
                return True
    return False


def _running_max(frag: Fragment) -> bool:
    init = frag.tag.init
    return len(frag.shape) == 1 and frag.tag.state == "empty" and isinstance(init, float) \
        and math.isinf(init) and init < 0


def enter(w, op: Op, name: str) -> None:
    st = state(w)
    st.loop_ops[name] = op
    if w.phase != "check":
        return
    start, stop = w.value(op.arg("start")), w.value(op.arg("stop"))
    frame = LoopFrame(name, start, stop)
    st.loops.append(frame)
    carried = _carried(w, op.regions[0])
    step = w.value(op.arg("step"))
    first = w.split_first(op)
    if first is not None:
        _continue(w, op, name, frame, carried, w.value(first.arg("start")), start)
        return
    if not carried or not _reads_running_max(w, op.regions[0]) or start is None or \
            stop is None or step != 1:
        return
    nested = _assigned_in_regions(w, op.regions[0], {id(f) for _, f in carried})
    if nested:
        names = ", ".join(dict.fromkeys(label(v) for v, _ in nested))
        w.not_modelled(op, f"the softmax state ({names}) updated inside an if or a nested "
                           f"region of the key loop")
        for _, frag in [*carried, *nested]:
            frag.tag = FragTag("unknown", why_unknown="softmax state updated conditionally")
        return
    j = w.ctx.vars[name].term
    for value, frag in carried:
        tag = _hypothesis(w, frag, Span(name, start, j))
        if tag is None:
            w.not_modelled(op, f"the loop-carried {label(value)} (modelled: a running max, "
                               f"its row sum and the P V accumulator, from -inf and 0)")
            frag.tag = FragTag("unknown", why_unknown=f"loop-carried {label(value)} is not "
                               "modelled")
            continue
        frag.tag = tag
        frame.entries.append(Entry(value, frag, tag))


def _kind(frag: Fragment) -> str | None:
    """Which softmax state a fragment starts as: "max" (a row vector from -inf), "sum" (a
    row vector from 0), "acc" (a tile from 0); None: none of them."""
    pre = frag.tag
    if pre.state != "empty" or not isinstance(pre.init, (int, float)):
        return None
    if len(frag.shape) == 1 and _running_max(frag):
        return "max"
    if len(frag.shape) == 1 and pre.init == 0:
        return "sum"
    if len(frag.shape) == 2 and pre.init == 0:
        return "acc"
    return None


def _hypothesis(w, frag: Fragment, span: Span, kind: str | None = None) -> FragTag | None:
    pre = frag.tag
    kind = kind or _kind(frag)
    if kind is None:
        return None
    series, row = Hole("series"), Hole("row")
    tag = FragTag("data", {}, pre.source, [], pre.reset_scope, init_loc=pre.init_loc)
    ref = Stat("max", series, span, row)
    if kind == "max":
        tag.meaning = ref
    elif kind == "sum":
        tag.meaning = Stat("sum", series, span, row, ref)
    elif kind == "acc":
        col = Hole("col")
        tag.meaning = SoftAcc(ref, span, series, row, col)
        col.sinks.append(lambda v: tag.fields.__setitem__("col", bv(v)))
    else:
        return None
    row.sinks.append(lambda v: tag.fields.__setitem__("row", bv(v)))
    if isinstance(tag.meaning, Stat):
        from .softmax import stat_fields
        series.sinks.append(lambda v: tag.fields.update(
            {k: x for k, x in stat_fields(w, tag.meaning).items() if k != "row"}))
    return tag


def leave(w, op: Op, name: str) -> None:
    st = state(w)
    if w.phase != "check" or not st.loops or st.loops[-1].name != name:
        return
    frame = st.loops.pop()
    j = w.ctx.vars[name].term
    for entry in frame.entries:
        end = entry.frag.tag
        ok = _step(w, op, entry, end, j) and (
            entry.before is None or _entered(w, op, entry, j, frame.start))
        entry.frag.tag = _after(w, entry, end, j, frame.stop) if ok else FragTag(
            "unknown", why_unknown=f"{label(entry.value)} is not carried over the loop at "
            f"line {op.loc.line}")


def _step(w, op, entry: Entry, end: FragTag, j) -> bool:
    """The value at the end of iteration j is the hypothesis for j + 1."""
    if end.state == "unknown":
        return False
    hyp = entry.hypothesis.meaning
    name = label(entry.value)
    loc = state(w).assigned.get(id(entry.frag), op.loc)
    nxt = [(j, bv(j) + 1)]
    got = end.meaning
    layout = entry.frag.layout
    rows = entry.frag.shape[0]
    cols = entry.frag.shape[1] if len(entry.frag.shape) == 2 else None
    if type(got) is not type(hyp) or (isinstance(hyp, Stat) and
                                      (got.kind != hyp.kind or (got.ref is None) !=
                                       (hyp.ref is None))):
        what = _what(got)
        refute(w, op, "tag.loop-carried", True, loc=loc,
               message=lambda m, inst: (f"{name} is carried to the next iteration, which "
                                        f"reads it as {_what(hyp)}, but the loop assigns it "
                                        f"{what}"),
               hint=f"update {name} in every iteration from its previous value (m_i = "
                    f"maximum(m_i, row_max(x)), l_i = l_i * alpha + row_sum(p), "
                    f"o = o * alpha + P V)")
        return False
    if isinstance(hyp, Stat):
        want = hyp.subst(nxt)
        bad = differs(w, got, want)
    else:
        want_ref = hyp.ref.subst(nxt)
        bad = z3.Or(differs(w, got.ref, want_ref),
                    z3.Not(span_same(w, got.span, hyp.span.subst(nxt), resolve(got.series))),
                    row_differs(got.row, hyp.row), row_differs(got.col, hyp.col))
    row = resolve(hyp.row)
    if not isinstance(row, Hole):
        bad = z3.Or(bad, bv(row) != subst(bv(row), nxt))
    model = refute(
        w, op, "tag.loop-carried", bad, layout=layout, rows=rows, cols=cols, loc=loc,
        message=lambda m, inst: (
            f"at the end of iteration {w.ctx.vars[w.ctx.name_of_term(j)].name}="
            f"{_val(m, j)}, {name} holds {_describe(got, m, inst)}, but the next iteration "
            f"reads it as {_describe(_subst_meaning(hyp, nxt), m, inst)}"),
        hint=f"carry {name} over every block: assign it the value updated with this block "
             f"at the end of every iteration")
    return model is None


def _val(m, j) -> int:
    from argus.verify.smt import value
    return value(m, j)


def _subst_meaning(meaning, pairs):
    if isinstance(meaning, Stat):
        return meaning.subst(pairs)
    return SoftAcc(meaning.ref.subst(pairs), meaning.span.subst(pairs), meaning.series,
                   meaning.row, meaning.col)


def _describe(meaning, m, inst) -> str:
    row = resolve(getattr(meaning, "row", None))
    of_row = "" if row is None or isinstance(row, Hole) else \
        f" (row {_val(m, inst(bv(row)))})"
    if isinstance(meaning, Stat):
        return meaning.describe(m) + of_row
    if isinstance(meaning, SoftAcc):
        return (f"the products P V of {span_text(meaning.span, m)}{of_row} relative to m = "
                f"{meaning.ref.describe(m)}")
    return _what(meaning)


def _what(meaning) -> str:
    if isinstance(meaning, Stat):
        return {"max": "a running row max", "sum": "a plain row sum"}[meaning.kind] if \
            meaning.ref is None else "a running row sum of exp2(x - m)"
    if isinstance(meaning, SoftAcc):
        return "the P V accumulator"
    return "a value that is not a softmax statistic"


def _after(w, entry: Entry, end: FragTag, j, stop) -> FragTag:
    """The value after the loop: the hypothesis for j = stop (o keeps its contributions,
    which range over the loop's counter)."""
    from .softmax import stat_fields
    hyp = entry.hypothesis.meaning
    last = [(j, bv(stop))]
    if isinstance(hyp, Stat):
        stat = hyp.subst(last)
        return FragTag("data", stat_fields(w, stat), end.source, [], end.reset_scope,
                       meaning=stat)
    tag = end.copy()
    tag.meaning = SoftAcc(hyp.ref.subst(last), hyp.span.subst(last), resolve(end.meaning.series),
                          end.meaning.row, end.meaning.col)
    return tag


# -- a loop split in parts (walker.split_loops): the later parts continue the first -------
def _continue(w, op: Op, name: str, frame: LoopFrame, carried, lo, start) -> None:
    """A later part of a split loop (`for j in range(nf, nj)` after `for j in range(nf)`):
    the softmax state enters with the statistics of blocks [lo, start) that the earlier
    parts left. The part's hypothesis is the same as the whole loop's, over blocks [lo, j);
    at the end of its body it must hold for j + 1 (as for any loop), and the value it
    entered with must be the hypothesis at j = start (`_entered`): the same statistics of
    the same score tiles, where a tile of the earlier part counts as the same as this
    part's when it comes from the same product with the same arithmetic, and the masks of
    the two agree on the earlier blocks (`equivalent`)."""
    j = w.ctx.vars[name].term
    for value, frag in carried:
        pre = frag.tag
        kind = _continued_kind(pre.meaning, name, lo, start)
        if pre.state != "data" or kind is None:
            continue                      # not state the earlier part carried: as walked
        tag = _hypothesis(w, frag, Span(name, lo, j), kind)
        tag.source, tag.contributions = pre.source, list(pre.contributions)
        tag.fields = dict(pre.fields) if kind == "acc" else tag.fields
        frag.tag = tag
        frame.entries.append(Entry(value, frag, tag, pre))


def _continued_kind(m, name: str, lo, start) -> str | None:
    """The softmax state `m` stands for when it covers blocks [lo, start) of loop `name`."""
    if isinstance(m, Stat):
        kind = "max" if m.kind == "max" and m.ref is None else \
            "sum" if m.kind == "sum" and m.ref is not None else None
        span = m.span
    elif isinstance(m, SoftAcc):
        kind, span = "acc", m.span
    else:
        return None
    if kind is None or span.loop != name:
        return None
    same = z3.simplify(z3.And(bv(span.lo) == bv(lo), bv(span.hi) == bv(start)))
    return kind if z3.is_true(same) else None


def _entered(w, op: Op, entry: Entry, j, start) -> bool:
    """The value a later part entered with is its hypothesis at j = start."""
    hyp = _subst_meaning(entry.hypothesis.meaning, [(j, bv(start))])
    got = entry.before.meaning
    name = label(entry.value)
    loc = state(w).assigned.get(id(entry.frag), op.loc)
    why = _not_equivalent(w, got, hyp, start)
    if why is None:
        return True
    refute(w, op, "tag.loop-carried", True, loc=loc,
           message=lambda m, inst: (f"{name} enters this part of the key loop (line "
                                    f"{op.loc.line}) holding {_what(got)} of the earlier "
                                    f"part's score tiles, which are not this part's: {why}"),
           hint="compute the scores the same way in every part of a split loop (the same "
                "product and scale; only the mask may differ, on blocks it keeps whole)")
    return False


def _not_equivalent(w, a, b, start) -> str | None:
    """Why two softmax meanings differ, None when they are the same numbers (series
    compared with `equivalent` over the blocks of a's span)."""
    if type(a) is not type(b):
        return "a different kind of statistic"
    if isinstance(a, Stat):
        if a.kind != b.kind or (a.ref is None) != (b.ref is None):
            return "a different kind of statistic"
        why = equivalent(w, resolve(a.series), resolve(b.series), a.span)
        if why is None and a.ref is not None:
            why = _not_equivalent(w, a.ref, b.ref, start)
        return why
    why = equivalent(w, resolve(a.series), resolve(b.series), a.span)
    return why if why is not None else _not_equivalent(w, a.ref, b.ref, start)


def equivalent(w, s1, s2, span: Span) -> str | None:
    """`_equivalent`, once per pair of tiles and span (the state's statistics and their
    references name the same two tiles several times)."""
    if s1 is s2:
        return None
    memo = w.__dict__.setdefault("_equivalent_memo", {})
    key = (id(s1), id(s2), span.loop, bv(span.lo).sexpr(), bv(span.hi).sexpr())
    if key not in memo:
        memo[key] = (s1, s2, _equivalent(w, s1, s2, span))     # keeps the ids alive
    return memo[key][2]


def _equivalent(w, s1, s2, span: Span) -> str | None:
    """Two score tiles of one loop are the same numbers on the blocks of `span`: the same
    series, or series of the same loop counter whose tags are the same terms, computed by
    the same arithmetic from the same product (`recipe`), with masks that keep the same
    real elements on those blocks. None when they are; else why not."""
    if s1 is s2:
        return None
    if not (isinstance(s1, Series) and isinstance(s2, Series)):
        return "a statistic without its score tile"
    if s1.loop != s2.loop or (s1.rows, s1.cols, s1.layout) != (s2.rows, s2.cols, s2.layout):
        return f"{s1.name} and {s2.name} are tiles of different loops or shapes"
    if s1.recipe is None or s1.recipe != s2.recipe:
        return (f"{s1.name} (line {s1.loc.line}) and {s2.name} (line {s2.loc.line}) are "
                f"not computed the same way from the product")
    if set(s1.fields) != set(s2.fields) or any(
            not z3.is_true(z3.simplify(bv(s1.fields[n]) == bv(s2.fields[n]))) and
            not holds(w.ctx, bv(s1.fields[n]) == bv(s2.fields[n]))
            for n in s1.fields):
        return f"the tags of {s1.name} and {s2.name} differ"
    if not z3.is_true(z3.simplify(bv(s1.block) == bv(s2.block))):
        return f"{s1.name} and {s2.name} are blocks of different counters"
    # on the blocks of the span, each mask keeps the same real elements
    jv = w.ctx.vars[span.loop].term if span.loop in w.ctx.vars else None
    keep1 = s1.mask.term if s1.mask is not None else z3.BoolVal(True)
    keep2 = s2.mask.term if s2.mask is not None else z3.BoolVal(True)
    pr, pc = w.pos["pr"], w.pos["pc"]
    real = [r for r in (s1.real_row, s1.real_col) if r is not None]
    within = [z3.UGE(bv(jv), bv(span.lo)), *below(jv, span.hi)] if jv is not None else []
    claim = keep1 == keep2
    if not holds(w.ctx, claim, [*within, z3.ULT(pr, s1.rows), z3.ULT(pc, s1.cols), *real],
                 in_integers=True):
        return (f"the masks of {s1.name} and {s2.name} may keep different elements of the "
                f"earlier blocks")
    return None
