"""The contract of a counting sort's scatters (countsort.py): each entry of the key array
whose key is the block's goes to its *rank slot*.

In a kernel that places the entries q of a key array X with X(q) == x (x uniform: the
block's expert), the rank slot of q is

    first(x) + Cnt(x, q)

with first the exclusive prefix sum of a whole count vector C (`element(prefix_sum(
load_indices(C)), x)`), or Below(x, N), the entries of smaller keys, counted by the kernel
itself over the whole key array (countsort_rules.element): the key's first slot plus the
number of earlier entries with the same key. A scatter of a 1-D vector through an index vector I (its computed indices) is
proved when, for the entries q(pr) = base + pr of the tile the iteration counted
(the prefix sum of the indicator [X(q) == x and q < end] whose count the loop carries):

  - I(pr) is outside the destination (dropped) for every other element;
  - into rank order (`ids`, `wsorted`): I(pr) is q's rank slot there, and the value
    carries every routing field of the entry (it is the entry's own: its gate;
    vectors.scatter checks the fields are equal); an integer computed for the entry (its
    token id) must moreover be named by a tag_assert that states its value
    (`tag_assert(tok == coord(x_src)[0] - j * T)`, discharged by asserts.py);
  - per entry (`slots`): I(pr) = q, and the value is q's rank slot;

and the loop's carried count proves that the tiles counted (and placed) cover the key
array (countsort_loops.py); the key is the block's index over a grid as long as the count
vector (one block per key; any grid with Below). The claims name the carried count's hole
and are checked when its loop closes. What is assumed (docs/design/verifier-moe.md): C
counts the keys (C[x] = Cnt(x, N); nothing with Below), and every key lies in [0, number
of blocks); then the rank slots are a bijection of the entries onto [0, N), sorted by key,
then entry."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.verify.finding import Finding
from argus.verify.smt import bv

from . import countsort as C
from . import asserts, countsort_loops, proved
from .origin import Origin
from .routing import IndexVector
from .values import Fragment


def scatter(w, op: Op, base) -> None:
    base(w, op)
    if w.phase != "check":
        return
    claim = contract(w, op)
    if claim is None:
        return
    if countsort_loops.defer(w, claim):
        proved.mark(w, op)


def contract(w, op: Op):
    """The claim (with holes) that proves this scatter, or None when it is not of the
    idiom's form (then the scatter stays as origin.py says: unproved)."""
    dst, rows, src = (w.value(op.arg(n)) for n in ("dst", "rows", "src"))
    if not (isinstance(dst, tuple) and dst[0] == "tensor" and isinstance(rows, IndexVector)
            and isinstance(rows.fragment, Fragment) and isinstance(src, Fragment)):
        return None
    index = C.meaning(rows.fragment)
    value = C.meaning(src)
    records = [r for r in w.__dict__.get("_countsort_prefix", [])
               if r["depth"] == len(w.frames) and r["kind"] == "count"]
    if not isinstance(index, C.Val) or not records:
        return None
    rec = records[-1]
    stack = countsort_loops.frames(w)
    holes = [c.hole for c in stack[-1].carried] if stack else []
    terms = [bv(index.term)] + ([bv(value.term)] if isinstance(value, C.Val) else [])
    hole = next((h for h in holes if any(C.mentions(t, h) for t in terms)), None)
    if hole is None:
        return None                  # no carried count: nothing says every entry is placed
    first = next((f for f in w.__dict__.get("_countsort_first", [])
                  if any(C.mentions(t, f[0]) for t in terms)), None)
    if first is None:
        return None
    f_term, counts, f_index, below = first
    if below is not None and below != rec["tensor"]:
        return None              # smaller keys counted in another array than the one placed
    pr = w.pos["pr"]
    q = rec["base"] + pr
    key = rec["key"]
    extent = _one_block_per_key(w, key, counts)
    if extent is None:
        return None
    if below is not None:        # the grid is tied to the keys by a stored count (finish)
        w.__dict__.setdefault("_countsort_below_placed", []).append((op, extent, below))
    else:                        # the count vector must not be this kernel's output (finish)
        w.__dict__.setdefault("_countsort_offsets_placed", []).append((op, counts))
    entry, cnt = C.entry_fn(w, rec["tensor"]), C.count_fn(w, rec["tensor"])
    placed = z3.And(entry(q) == key, z3.ULT(q, rec["end"]))
    rank = f_term + cnt(key, q)
    extent = bv(w.tensors[dst[1]][0])
    written = z3.ULT(bv(index.term), extent)
    opaque = isinstance(src.origin, Origin) and bool(src.origin.opaque)
    if C.mentions(bv(index.term), hole):            # into rank order
        if opaque or not _same_entry(rows.fragment, src):
            return None
        if isinstance(value, C.Val) and id(op.arg("src")) not in asserts.values_named(w):
            return None      # an integer computed for the entry: say what it is (its token)
        at = bv(index.term) == rank
    else:                                          # per entry: the value is the slot
        if not isinstance(value, C.Val):
            return None
        at = z3.And(bv(index.term) == q, bv(value.term) == rank)
    # the other elements are dropped (an index past the destination); a rank slot past it
    # is only possible with counts that do not count the keys (assumed, not proved here)
    formula = z3.And(z3.Implies(z3.Not(placed), z3.Not(written)),
                     z3.Implies(placed, z3.And(at, bv(f_index) == key)))
    # first(x) is the same term on both sides: a free name stands for it (an if-then-else
    # over every key's prefix sum, 10^4 nodes at 128 experts, that no step of the proof
    # needs to look into); a claim proved for every value of the name holds for this one
    name = z3.FreshConst(bv(f_term).sort(), "first")
    named = lambda t: z3.substitute(bv(t), (bv(f_term), name))
    formula = named(formula)
    stack[-1].tiles.append((hole, rec["tile"]))
    extra = [*w.path, z3.ULT(pr, rows.length)]
    info = {"tensor": rec["tensor"], "key": key, "first": name, "q": q, "at": [],
            "index": named(index.term), "dst": dst[1], "counts": first[1],
            "value": named(value.term) if isinstance(value, C.Val) else None,
            "shape": "rank" if C.mentions(bv(index.term), hole) else "entry"}
    return countsort_loops.Claim(op, formula, extra, (hole,), w.scope_vars(), info)


AMONG = ("row", "col", "live")      # fields of an element, not of the routing entry


def _same_entry(index: Fragment, src: Fragment) -> bool:
    """The value moved to the slot is the entry's own: it carries every routing field of
    the index entry (token, choice: the scatter rule, vectors.scatter, checks that they are
    equal), so a value read from another entry (a tile of another token) is not placed as
    this entry's. A value whose join of two entries dropped a field does not qualify."""
    if index.tag.state != "data" or src.tag.state != "data":
        return False
    need = [n for n in index.tag.fields if n not in AMONG]
    return bool(need) and all(n in src.tag.fields for n in need)


def _one_block_per_key(w, key, counts):
    """The extent of the grid axis whose block index is the key, when it is the count
    vector's length: block e places the entries of key e, and every key of [0, length)
    has its block (so the blocks together place every entry whose key is below it); else
    None. With no count vector (counts None: first slots counted from the keys, Below) the
    extent is returned as it is, and `finish` asks the block to store its key's count into
    a vector that long."""
    for axis, extent in zip("xyz", w.grid):
        var = w.loop_vars.get(("block_id", axis))
        if var is None or not bv(var[0]).eq(bv(key)):
            continue
        if counts is None or _same_length(w, extent, w.tensors.get(counts, (None,))[0]):
            return extent
    return None


def _same_length(w, extent, length) -> bool:
    if length is None:
        return False
    if isinstance(extent, int) and isinstance(length, int):
        return extent == length
    return C.proves(w, bv(extent) == bv(length), [])


def finish(w) -> None:
    """The conditions of a placement's proof that rest on the whole kernel: the count
    vector whose offsets are the first slots is an input (`_offsets_read_only`), and the
    first slots counted from the keys come with a stored count (`_below_tied`)."""
    if w.phase != "check":
        return
    _offsets_read_only(w)
    _below_tied(w)


def _offsets_read_only(w) -> None:
    """First slots read as the offsets of a count vector that this kernel also writes are
    a race between blocks (block e reads what the others store, before or after they do):
    the proofs resting on them are withdrawn, said."""
    placed = w.__dict__.get("_countsort_offsets_placed", [])
    if not placed:
        return
    written = _written(w)
    said = set()
    for op, counts in placed:
        if counts in written and proved.is_proved(w, op):
            _withdraw(w, op, said,
                      f"the first slots are the offsets of {counts}, which this kernel also "
                      f"writes: a block may read another block's count before or after it "
                      f"is stored (the blocks are not ordered)",
                      "read the counts another kernel stored (moe_count), or count the keys "
                      "in this block (moe_place's COUNT_HERE form)")


def _withdraw(w, op: Op, said: set, why: str, hint: str) -> None:
    """Withdraw the proof of the scatter at `op` and say why, once for its line."""
    proved.withdraw(w, op)
    if (op.loc.line, op.loc.col) in said:
        return
    said.add((op.loc.line, op.loc.col))
    w.findings.append(Finding("tag.placement", "warning",
                              f"{why}; what this writes is not verified", op.loc, "scatter",
                              hint))


def _written(w) -> set:
    """The kernel tensors some op of the kernel writes (stores, scatters, atomics)."""
    from .origin import _root
    made = {r: op for op in w.kernel.walk() for r in op.results}
    return {_root(op.arg("dst"), made) for op in w.kernel.walk()
            if op.opcode in ("store", "scatter.store", "atomic.add", "tma.store")}


def _below_tied(w) -> None:
    """Placements whose first slots were counted from the keys (Below) are proved only if
    the kernel also stores, proved, the count of each block's key (countsort_store.py) into
    a vector as long as the grid axis: with moe_topk's proof that every key is below that
    length, every key then has its block (the offsets' form gets this from the length of
    the count vector it reads). Else the proofs are withdrawn, with a finding that says
    what is missing."""
    placed = w.__dict__.get("_countsort_below_placed", [])
    if not placed:
        return
    stored = [(op, dst, keys) for op, dst, keys in w.__dict__.get("_countsort_stored", [])
              if proved.is_proved(w, op)]
    said = set()
    for op, extent, keys in placed:
        tied = any(k == keys and _same_length(w, extent, w.tensors.get(dst, (None,))[0])
                   for _, dst, k in stored)
        if proved.is_proved(w, op) and not tied:
            _withdraw(w, op, said,
                      f"the first slots are counted from the keys of {keys} (the entries of "
                      f"smaller keys), but no store of each block's key count into a vector "
                      f"as long as the grid ({extent} blocks) is proved: nothing ties the "
                      f"keys to the blocks, so an entry whose key has no block may be left "
                      f"unplaced",
                      "store the count of the block's key after placing its entries, "
                      "store(tile(counts, (1,), (e,)), cast(seen, int32)), into a vector of "
                      "one entry a block (moe_place's COUNT_HERE form)")
