"""Counterexamples of the counting-sort contract (countsort_scatter.py, countsort_loops.py):
a key array on which the kernel places an entry where the reference does not.

A failed claim is asked again on one concrete family of key arrays: every entry holds the
block's key x (so Cnt(x, a) = a, every other key counts 0, the count vector is [0, ..., N,
..., 0] and first(x) = 0). If the claim fails there too, the model's sizes, block and
counters, with that key array and those counts, are a run of the kernel: the element named
is written wrongly (or never) on it. Otherwise nothing is reported here and the stores
resting on the claim are only unproved."""

from __future__ import annotations

from dataclasses import replace

import z3

from argus.verify import smt
from argus.verify.finding import Finding
from argus.verify.smt import WIDTH, bv, value

from . import countsort as C
from . import report

SMALL = 1 << 13          # the witness's key array is spelt out: keep it short


def on_one_key(w, formula, tensor: str, key, first):
    """`formula` on the key array whose entries are all `key` (first(key) = 0)."""
    entry = C.entry_fn(w, tensor)
    x, a = z3.Var(0, z3.BitVecSort(WIDTH)), z3.Var(1, z3.BitVecSort(WIDTH))   # Cnt(x, a)
    zero = z3.BitVecVal(0, WIDTH)
    out = z3.substitute_funs(
        formula, (entry, bv(key)),
        *((C.count_fn(w, tensor, kind), z3.If(holds(bv(key), x), a, zero))
          for kind, holds in C.KINDS.items()))
    if first is not None:
        out = z3.substitute(out, (first, z3.BitVecVal(0, WIDTH)))
    return out


def model_of(w, goal, extra, tensor: str):
    """A model of `goal` with the shortest key array of a few lengths tried (at most
    SMALL entries), or None."""
    n = bv(w.tensors[tensor][0])
    for limit in (4, 16, 64, 256, 1024, 2048, 4096, SMALL):
        asked = [*extra, goal, z3.ULE(n, limit)]
        facts = smt.relevant(w.ctx.facts, asked)
        result, s = smt.solve([*facts, *asked], solver=False)
        if result == z3.sat:
            return s.model()
    return None


def report_claim(w, claim) -> bool:
    """Report a failed placement claim as an error when the one-key array refutes it."""
    info = claim.info
    if not info or info["shape"] != "entry":
        # into rank order (ids, wsorted): which entry's value lands where depends on more
        # than the keys (two choices of one token write the same id), so the one-key array
        # does not always show a wrong value there: unproved, never a counterexample that
        # might not replay; the per-entry scatter (slots) names the wrong slot itself
        return False
    goal = z3.Not(on_one_key(w, claim.formula, info["tensor"], info["key"], info["first"]))
    model = model_of(w, goal, [*claim.extra, *info["at"]], info["tensor"])
    if model is None:
        return False
    one = lambda t: value(model, on_one_key(w, bv(t), info["tensor"], info["key"],
                                            info["first"]))
    q, got = one(info["q"]), one(info["value"])
    n = value(model, bv(w.tensors[info["tensor"]][0]))
    what = (f"entry {q} of {info['tensor']} (key {value(model, info['key'])}, the only "
            f"key) gets slot {got}; its rank slot is {q}")
    _finding(w, claim, model, info, q, {f"slot of entry {q}": got},
             {f"slot of entry {q}": q}, n, what)
    return True


def report_uncovered(w, claims, after, tensor: str, key, extra):
    """The carried count ends short of the key array: its first entry never counted is
    never placed (on the one-key array every entry has the block's key). The op of the
    per-entry scatter reported, or None."""
    mine = [c for c in claims if c.info and c.info["shape"] == "entry"]
    if not mine:
        return None
    claim = mine[0]
    n = bv(w.tensors[tensor][0])
    end = on_one_key(w, after, tensor, key, None)
    model = model_of(w, z3.ULT(end, n), extra, tensor)
    if model is None:
        return None
    q = value(model, end)
    what = (f"entry {q} of {tensor} (and every later one) is never placed: the count the "
            f"loops carry ends at {q} of {value(model, n)} entries (the tiles counted stop "
            f"short of the key array)")
    _finding(w, claim, model, claim.info, q, {f"slot of entry {q}": "never written"},
             {f"slot of entry {q}": q}, value(model, n), what)
    return claim.op


def _finding(w, claim, model, info, index, actual, expected, n, what) -> None:
    key = value(model, info["key"])
    counts = w.tensors.get(info["counts"], (0,))[0] if info["counts"] else 0
    e = counts if isinstance(counts, int) else value(model, bv(counts))
    cex = report.counterexample(w, model, claim.scope, elements=(report.element(
        model, info["dst"], (z3.BitVecVal(index, WIDTH),) if isinstance(index, int)
        else (index,), {}, {}),))
    element = replace(cex.elements[0], index=(index,), actual=actual, expected=expected)
    routing = {info["tensor"]: {q: key for q in range(n)}}
    if info["counts"]:
        routing[info["counts"]] = {x: (n if x == key else 0) for x in range(e)}
    cex = replace(cex, elements=(element,), routing=routing)
    w.findings.append(Finding(
        "tag.placement", "error",
        f"{what}: with every entry of {info['tensor']} holding key {key} ({n} entries"
        + (f", {info['counts']} counting them" if info["counts"] else "")
        + f"), {info['dst']}[{index}] is not what a counting sort writes", claim.op.loc,
        "scatter",
        "place entry q at first(x) + the number of earlier entries with key x (an exclusive "
        "prefix sum of the tile's hits plus the count carried over every earlier tile), "
        "and count every tile of every segment", cex))
