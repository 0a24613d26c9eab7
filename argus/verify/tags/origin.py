"""The tensor of origin: which global tensors a value was computed from, and along which
axis of which load its rows and columns run.

Indices alone cannot tell A from B: filling B's stage from A in a square GEMM, or V's
from K in attention, keeps every row/col/k tag right and computes the wrong numbers. So
every value also carries an Origin, one more tag component moved by one generic transfer
(`transfer`, run by the walker after each op's own rule):
  - a global tile read by a load, or a shared-memory stage filled by TMA (its writers,
    collected in the first walk), is a Read of its tensor at the line of the load;
  - wgmma's accumulator is the product of its operands: rows from A's rows, columns from
    B's mn axis (axis 0 of a K-major tile, axis 1 of an MN-major one), and the reads of
    both (an A operand in registers, P in attention, brings the reads it came from);
  - any other op's result unions its fragment operands' reads and keeps the rows (cols)
    they agree on; assign moves the source's origin (a constant resets it).

The built-in contract (`check_store`, at every store or atomic add of a value into a
kernel tensor) then says which tensor each operand must come from:
  1. the rows (columns) of a product stored into C come from a tensor whose axis has C's
     row (column) extent, when the kernel has such a data input: the product of the
     kernel's A and B in the right roles (a tile of B read as A is caught in a
     rectangular GEMM);
  2. no data input of the kernel is left unread while another of the same shape is read by
     two loads that feed the value (B's stage filled from A in a square GEMM, V loaded
     from K, the gate weights loaded from the up weights): the load whose place in
     program order is the missing tensor's place in the signature is named.
Both are stated over tensor names only, so a kernel whose origin is unknown anywhere (an
op the pass does not model) is not checked: nothing is claimed about it.
`tag(x).tensor` in a tag_assert reads the single tensor a value comes from (asserts.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import z3

from argus.ir.nodes import Loc, Op, Value
from argus.ir.types import GlobalTensorType
from argus.verify import integers, termscan
from argus.verify.finding import ElementTag, Finding
from argus.verify.smt import bv, only, solve, value as model_value

from . import heads, proved
from .values import Fragment, GlobalTile, SmemView


@dataclass(frozen=True)
class Read:
    """A read of global tensor `tensor` by the load at `loc`."""
    tensor: str
    loc: Loc


@dataclass(frozen=True)
class Axis:
    """Axis `axis` of the tensor of `read`: where a value's rows or columns run."""
    read: Read
    axis: int


@dataclass(frozen=True)
class Origin:
    reads: frozenset
    rows: Optional[Axis] = None
    cols: Optional[Axis] = None
    product: bool = False          # a wgmma product (or computed from one)
    # ops that mix data values in a way no rule relates to the output (a row reduction,
    # a prefix sum or an entry of data that no idiom pack gives a meaning): (opcode, loc)
    opaque: frozenset = frozenset()

    @property
    def tensors(self) -> frozenset:
        return frozenset(r.tensor for r in self.reads)


UNKNOWN = "unknown"        # an operand's origin the pass does not know


def of_tile(tile: GlobalTile, loc: Loc) -> Origin:
    read = Read(tile.tensor, loc)
    return Origin(frozenset([read]), Axis(read, 0), Axis(read, 1))


def of_view(w, view: SmemView, mn_axis: int = 0):
    """The origin of a shared-memory stage: the tensors its TMA writers load (UNKNOWN when
    no writer is known); rows along `mn_axis` of the tile when one load fills it."""
    writers = [x for x in w.writers if x.view.buffer.name == view.buffer.name]
    if not writers:
        return UNKNOWN
    reads = frozenset(Read(x.src.tensor, x.loc) for x in writers)
    axis = Axis(next(iter(reads)), mn_axis) if len(reads) == 1 else None
    if len({x.src.tensor for x in writers}) == 1 and axis is None:   # bands of one tensor
        axis = Axis(Read(writers[0].src.tensor, writers[0].loc), mn_axis)
    return Origin(reads, axis, None)


def of_value(w, v):
    """The origin of an operand value; None for values that carry no data (scalars,
    constants, index fragments made from coordinates), UNKNOWN when it is not known."""
    if isinstance(v, Fragment):
        return getattr(v, "origin", None)
    if isinstance(v, SmemView):
        return of_view(w, v)
    return None


def remember_scalar(w, term, origin) -> None:
    """The scalar `term` (an entry of a fragment, a fresh variable) carries `origin`: a
    value computed from it (a sum of entries added to a fragment) is computed from that
    data, through whatever decided it (a count of the entries a comparison chose)."""
    if z3.is_expr(term) and origin is not None:
        w.__dict__.setdefault("_scalar_origins", {})[term.get_id()] = (term, origin)


def of_scalar(w, term):
    """The origin of a scalar operand: the merged origins of the fragment entries its term
    names (None: a scalar of sizes, counters and constants)."""
    table = w.__dict__.get("_scalar_origins")
    if not table or not z3.is_expr(term):
        return None
    ids = termscan.scan(term).variables
    return merge(o for i, (_, o) in table.items() if i in ids)


def merge(origins) -> Optional[Origin]:
    """The union of several origins (UNKNOWN when any is); rows/cols kept where they agree."""
    origins = [o for o in origins if o is not None]
    if any(o is UNKNOWN for o in origins):
        return UNKNOWN
    if not origins:
        return None
    reads = frozenset().union(*(o.reads for o in origins))
    rows = {o.rows for o in origins if o.rows is not None}
    cols = {o.cols for o in origins if o.cols is not None}
    return Origin(reads, rows.pop() if len(rows) == 1 else None,
                  cols.pop() if len(cols) == 1 else None, any(o.product for o in origins),
                  frozenset().union(*(o.opaque for o in origins)))


def _set(frag, origin) -> None:
    if isinstance(frag, Fragment):
        frag.origin = origin


def follow(w, op: Op) -> None:
    """`transfer`, after op's own rule ran; what it cannot follow becomes UNKNOWN (no
    contract is then checked on it) and is reported as not modelled, never hidden."""
    try:
        transfer(w, op)
        if w.phase == "collect":
            record_load(w, op)
    except (TypeError, AttributeError, NameError, AssertionError, z3.Z3Exception) as err:
        for r in op.results:
            _set(w.env.get(r), UNKNOWN)
        w.rule_crashed(op, err, "tensor-of-origin transfer")
    except (ValueError, LookupError) as err:
        for r in op.results:
            _set(w.env.get(r), UNKNOWN)
        w.not_modelled(op, f"the tensor of origin: {type(err).__name__}: {err}")


def transfer(w, op: Op) -> None:
    """Give the results of `op` (and the fragment an in-place op writes) their origin."""
    code = op.opcode
    if code == "wgmma.mma":
        acc, a, b = (w.value(op.arg(n)) for n in ("acc", "a", "b"))
        if not isinstance(acc, Fragment):
            return
        b_axis = 0 if op.attrs.get("b_major", "k") == "k" else 1
        oa = of_view(w, a, 0) if isinstance(a, SmemView) else of_value(w, a)
        ob = of_view(w, b, b_axis) if isinstance(b, SmemView) else of_value(w, b)
        if oa is None or ob is None or UNKNOWN in (oa, ob):
            _set(acc, UNKNOWN)
            return
        product = Origin(oa.reads | ob.reads, oa.rows, ob.rows, True, oa.opaque | ob.opaque)
        before = getattr(acc, "origin", None)
        _set(acc, product if before is None else merge([before, product]))
        return
    if code in SINKS and w.phase == "check":     # what reaches a kernel tensor
        dst = w.value(op.arg("dst"))
        if not isinstance(dst, SmemView) and code != "tma.store":
            src = w.value(op.arg("src"))
            _sink(w, of_value(w, src) if isinstance(src, (Fragment, SmemView)) else
                  None if src is None or isinstance(src, (int, float)) else UNKNOWN, op)
            if code == "scatter.store":          # rows chosen by computed data
                rows = w.value(op.arg("rows"))
                o = getattr(getattr(rows, "fragment", None), "origin", None)
                if isinstance(o, Origin) and o.reads:
                    _unproved(w, op, o.opaque | {("indices.from_frag", op.loc)})
    if code == "store":                     # into shared memory: for the TMA store
        dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
        if isinstance(dst, SmemView):
            staged = w.__dict__.setdefault("_origin_staged", {})
            name = dst.buffer.name
            o = of_value(w, src) if isinstance(src, Fragment) else UNKNOWN
            staged[name] = o if name not in staged else merge([staged[name], o])
        return
    if code == "tma.store":
        dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
        if w.phase == "check" and isinstance(dst, GlobalTile) and isinstance(src, SmemView):
            staged = w.__dict__.get("_origin_staged", {}).get(src.buffer.name)
            _sink(w, staged if staged is not None else UNKNOWN, op)
            check_store(w, op, dst, staged, lambda a, e: _tile_model(w, dst, a, e))
        return
    if code == "frag.assign":
        dst, src = w.value(op.arg("dst")), w.value(op.arg("src"))
        _set(dst, of_value(w, src) if isinstance(src, (Fragment, SmemView)) else None)
        return
    if code == "indices.element":             # an entry of a data fragment is data
        src = w.value(op.arg("v"))
        if isinstance(src, Fragment) and op.results:
            remember_scalar(w, w.env.get(op.result), of_value(w, src))
        return
    for r in op.results:
        out = w.env.get(r)
        if not isinstance(out, Fragment) or getattr(out, "origin", None) is not None:
            continue
        if code == "load":
            src = w.value(op.arg("src"))
            _set(out, of_tile(src, op.loc) if isinstance(src, GlobalTile) else
                 of_value(w, src) if isinstance(src, SmemView) else UNKNOWN)
            continue
        if code == "frag.coord":             # row_of / col_of: positions, no data
            _set(out, None)
            continue
        if code == "math.mul" and any(type(o) in (int, float) and o == 0
                                      for o in op.operands):
            _set(out, None)                  # times a literal zero: no data (finite data)
            continue
        got = merge(of_value(w, w.value(o)) if isinstance(w.value(o), (Fragment, SmemView))
                    else of_scalar(w, w.value(o)) for o in op.operands if isinstance(o, Value))
        if got not in (None, UNKNOWN) and len(out.shape) < 2:
            got = Origin(got.reads, got.rows, None, got.product, got.opaque)   # no columns
        if isinstance(got, Origin) and _decides_by_data(w, op, out):
            got = replace(got, opaque=got.opaque | {(code, op.loc)})
        _set(out, got)


# -- the contract at a store ----------------------------------------------------------------

def _inputs(w) -> list[str]:
    """The kernel's data inputs: float tensors no op writes, in signature order."""
    written = _written(w)
    return [p.name for p in w.kernel.params if isinstance(p.type, GlobalTensorType)
            and p.type.dtype.is_float and p.name not in written]


def _written(w) -> set:
    got = w.__dict__.get("_origin_written")
    if got is None:
        made = {}
        for op in w.kernel.walk():
            for r in op.results:
                made[r] = op
        got = set()
        for op in w.kernel.walk():
            if op.opcode in ("store", "atomic.add", "tma.store"):
                got.add(_root(op.arg("dst"), made))
        w._origin_written = got
    return got


def _root(v, made) -> Optional[str]:
    """The kernel tensor a tile (of a segment, ...) of a global tensor is cut from."""
    for _ in range(64):
        if not isinstance(v, Value):
            return None
        if isinstance(v.type, GlobalTensorType) and v not in made:
            return v.name
        op = made.get(v)
        if op is None:
            return None
        v = next((o for o in op.operands if isinstance(o, Value)), None)
    return None


def _loaded(w) -> set:
    """Every tensor some load of the kernel reads (TMA writers and register loads)."""
    return {x.src.tensor for x in w.writers} | set(w.__dict__.get("_origin_loads", ()))


def _same_shape(w, a: str, b: str) -> bool:
    ea, eb = w.tensors.get(a), w.tensors.get(b)
    return ea is not None and eb is not None and len(ea) == len(eb) and \
        all(_same_extent(w, x, y) for x, y in zip(ea, eb))


def _same_extent(w, x, y) -> bool:
    """Equal for every admitted size: the same term, or equal by the assumptions on the
    sizes (`assume(CQ == G * CK)` with G = 1 makes CQ and CK one extent). Asked of the
    facts about sizes alone (and the products of sizes they name): a routing kernel's facts
    about its data (prefix sums over 64 experts) tie the slot count P to every count and
    made "EF == P" a 12-s query at 40 experts; what the data facts could add about two
    extents is nothing the kernel states of its sizes."""
    if isinstance(x, int) and isinstance(y, int):
        return x == y
    if bv(x).eq(bv(y)):
        return True
    facts, products = _size_facts(w)
    # asked again for every store and warpgroup (6 times a grouped GEMM, 0.3-0.5 s each at
    # 64 experts when the extents differ): answered once while the size facts stay the
    # same (they only grow: their count names them)
    memo = w.__dict__.setdefault("_same_extent", {})
    key = (bv(x).get_id(), bv(y).get_id(), len(facts), len(products))
    got = memo.get(key)
    if got is None:
        claim = bv(x) == bv(y)
        try:                                     # linear: exact in integers
            answer = integers.check([*facts, *products], z3.Not(claim), exact=True)
        except integers.Untranslatable:
            answer = None
        if answer not in (z3.sat, z3.unsat):     # else the bit-vector query
            answer = solve([*facts, *products, z3.Not(claim)])[0]
        got = memo[key] = (x, y, answer == z3.unsat)
    return got[2]          # (x and y kept alive with it: z3 reuses the ids of freed terms)


def _size_facts(w) -> tuple[list, list]:
    """(the context's facts whose variables are all sizes or products of sizes, the
    meaning of those products), recomputed when facts were added since."""
    cached = w.__dict__.get("_size_facts")
    if cached is not None and cached[0] == len(w.ctx.facts):
        return cached[1], cached[2]
    sizes = {bv(t).get_id() for t in w.sizes.values() if z3.is_expr(bv(t))}
    products = []
    for atom, a, b in w.ctx.atoms.values():
        if only(a, sizes) and only(b, sizes):
            sizes.add(atom.get_id())
            products.append(atom == a * b)
    facts = [f for f in w.ctx.facts if only(f, sizes)]
    w.__dict__["_size_facts"] = (len(w.ctx.facts), facts, products)
    return facts, products


def check_store(w, op: Op, dst: GlobalTile, origin, model_of) -> None:
    """The built-in contract on the origin of a value stored (added) into `dst`.
    `model_of(actual, expected)` gives the counterexample (a concrete block, thread and
    element of the store)."""
    if not isinstance(origin, Origin) or dst.tensor not in w.tensors:
        return
    inputs = _inputs(w)
    wrong = _wrong_role(w, origin, dst, inputs) or _unread_twin(w, origin, inputs)
    if wrong is None:
        return
    read, expected, why = wrong
    done = w.__dict__.setdefault("_origin_reported", set())
    if (read.loc, expected) in done:
        return
    done.add((read.loc, expected))
    cex = model_of(f"{read.tensor} (line {read.loc.line})", expected)
    w.report(Finding(
        "tag.operand-tensor", "error",
        f"this load reads {read.tensor} where {expected} is meant: the value stored into "
        f"{dst.tensor} at line {op.loc.line} is computed from {read.tensor} here, but {why}",
        read.loc, "tma_load",
        f"load the tile from {expected} (tile({expected}, ...)), as the operand's role and "
        f"the kernel's signature say", cex))


def _wrong_role(w, origin: Origin, dst: GlobalTile, inputs):
    """Rows (cols) of a product from an axis whose extent is not the destination's, where
    another data input of the same rank has that extent on the same axis.
    Values that are no product (a gather, a copy) may move rows anywhere: not checked."""
    if not origin.product:
        return None
    for axis, along in ((0, origin.rows), (1, origin.cols)):
        if along is None or axis >= len(dst.extents):
            continue
        ext = _tag_extents(w, along.read.tensor)
        want = _tag_extents(w, dst.tensor)[axis]
        if ext is None or along.axis >= len(ext) or _same_extent(w, ext[along.axis], want):
            continue
        for name in inputs:
            other = _tag_extents(w, name)
            if name == along.read.tensor or len(other) != len(ext):
                continue
            if _same_extent(w, other[along.axis], want):
                what = "rows" if axis == 0 else "columns"
                return along.read, name, (
                    f"its {what} run along {along.read.tensor}'s axis {along.axis} (extent "
                    f"{_show(ext[along.axis])}) while {dst.tensor}'s {what} have extent "
                    f"{_show(dst.extents[axis])}, which is {name}'s axis {along.axis}")
    return None


def _tag_extents(w, tensor: str):
    """The extents of the axes a tensor's tags name (heads.py: a declared query head's
    columns name the columns of its KV head), None for an unknown tensor."""
    ext = w.tensors.get(tensor)
    if ext is None:
        return None
    return tuple(heads.extent(w, tensor, a, e) for a, e in enumerate(ext))


def _unread_twin(w, origin: Origin, inputs):
    """A data input no load reads, while a tensor of the same shape is read by two loads of
    this value: one of those loads was meant to read the missing input."""
    loaded = _loaded(w)
    for missing in inputs:
        if missing in loaded:
            continue
        for twin in sorted(origin.tensors):
            reads = sorted({r for r in origin.reads if r.tensor == twin},
                           key=lambda r: (r.loc.line, r.loc.col))
            if len(reads) < 2 or not _same_shape(w, twin, missing):
                continue
            group = [n for n in inputs if _same_shape(w, n, missing)]
            order = sorted({r for r in origin.reads if _same_shape(w, r.tensor, missing)},
                           key=lambda r: (r.loc.line, r.loc.col))
            at = group.index(missing)
            read = order[at] if at < len(order) and order[at].tensor == twin else reads[-1]
            return read, missing, (
                f"{missing} (the same shape as {twin}) is never read while {twin} is read "
                f"by {len(reads)} loads (lines {', '.join(str(r.loc.line) for r in reads)})")
    return None


def _show(x) -> str:
    return str(x) if isinstance(x, int) else str(z3.simplify(bv(x)))


def element(w, model, dst_name, idx_terms, actual, expected) -> ElementTag:
    return ElementTag(dst_name, tuple(model_value(model, x) for x in idx_terms),
                      {"computed from": actual}, {"computed from": expected})


def record_load(w, op: Op) -> None:
    """Remember the tensor a register load reads (first walk): `_loaded`."""
    if op.opcode == "load":
        src = w.value(op.arg("src"))
        if isinstance(src, GlobalTile):
            w.__dict__.setdefault("_origin_loads", set()).add(src.tensor)
            w.__dict__.setdefault("_origin_load_at", {}).setdefault(src.tensor, op.loc)


# -- every data input loaded reaches an output ------------------------------------------------

SINKS = ("store", "atomic.add", "tma.store", "scatter.store")

# ops that turn data values into discrete decisions: a select whose condition compares
# data and whose two values carry none (a coordinate or a constant picked by the data: an
# argmax, a one-hot, a histogram's increments), and indices computed from data. What such
# a value is depends on the comparisons, which no check relates to the kernel's output
# unless an idiom pack gives it a meaning; values computed from it inherit that.
MIXING = {"math.select": "a position or count chosen by comparing data",
          "indices.from_frag": "indices computed from data"}


def _decides_by_data(w, op: Op, out) -> bool:
    """A discrete choice made by comparing data: indices computed from data, or a select
    whose condition reads data and whose values carry none (an argmax, a one-hot). Whatever
    meaning an idiom gave the result (an index fragment, a masked tile) does not prove that
    choice, so it does not exempt it."""
    if op.opcode not in MIXING:
        return False
    if op.opcode == "indices.from_frag":
        return True
    cond, a, b = (of_value(w, w.value(op.arg(n))) for n in ("cond", "a", "b"))
    data = lambda o: isinstance(o, Origin) and bool(o.reads)
    return data(cond) and not data(a) and not data(b)


def _sink(w, origin, op=None) -> None:
    w.__dict__.setdefault("_origin_sinks", []).append(origin)
    if isinstance(origin, Origin) and origin.opaque and op is not None:
        _unproved(w, op, origin.opaque)


def _unproved(w, op: Op, opaque) -> None:
    """A stored value whose arithmetic the verifier does not prove: unverified, said
    (unless an idiom pack proved it, proved.py: held until its loops' hypotheses hold)."""
    if proved.is_proved(w, op):
        proved.remember_opaque(w, op, opaque)
        return
    unproved(w, op, opaque)


def unproved(w, op: Op, opaque) -> None:
    """Report the store at `op` unproved, through the ops that made its value opaque."""
    first = sorted(opaque, key=lambda x: (x[1].line, x[1].col))
    done = w.__dict__.setdefault("_origin_unproved", set())
    if (op.loc.line, op.loc.col) in done:
        return
    done.add((op.loc.line, op.loc.col))
    what = ", ".join(dict.fromkeys(f"{MIXING[c]} (line {loc.line})" for c, loc in first))
    what = ", ".join(what.split(", ")[:4])
    w.findings.append(Finding(
        "tag.value-unproved", "warning",
        f"the value written here is computed through {what}: the tag pass proves where "
        f"values go, not which discrete choice comparisons of data make, and no idiom it "
        f"knows gives this one a meaning; what this writes is not verified", op.loc,
        op.opcode.replace(".", "_"), "test it against a reference (argus run --interpret); "
        "docs/design/verifier.md lists the idioms whose arithmetic is proved"))


def dead_loads(w) -> None:
    """A data input the kernel loads (by TMA or into registers) from which no value it
    stores, adds or scatters into a kernel tensor is computed: the load's data is dropped,
    so an operand read elsewhere stands in for it (Q K^T computed as Q V^T, the gate
    projection from the up weights, an accumulation left out). Checked only when the
    origin of every stored value is known (else nothing is claimed)."""
    sinks = w.__dict__.get("_origin_sinks", [])
    if not sinks or any(o is UNKNOWN for o in sinks):
        return
    reached = frozenset().union(*(o.tensors for o in sinks if isinstance(o, Origin)))
    where = {}
    for x in w.writers:
        where.setdefault(x.src.tensor, x.loc)
    for name, loc in w.__dict__.get("_origin_load_at", {}).items():
        where.setdefault(name, loc)
    loaded_ints = [n for n in w.__dict__.get("_origin_load_at", {})
                   if n not in _written(w) and n not in _inputs(w)]
    for name in [*_inputs(w), *loaded_ints]:   # integer data read by a load too (keys)
        if name not in where or name in reached:
            continue
        loc = where[name]
        users = sorted(reached) or ["nothing (only constants)"]
        w.findings.append(Finding(
            "tag.operand-tensor", "error",
            f"{name} is loaded here but no value the kernel stores is computed from it: "
            f"what it writes comes from {', '.join(users)}, so an operand that should be "
            f"{name}'s tile is read from another tensor (or its use was left out)",
            loc, "tma_load" if any(x.loc == loc for x in w.writers) else "load",
            f"use the tile loaded from {name} where the computation needs it (the operand "
            f"of the wgmma or the term of the update that reads {name})"))


# -- tag(x).tensor in a tag_assert ------------------------------------------------------------

def code(w, name: str):
    """The number standing for kernel tensor `name` in an assertion (its place in the
    signature, from 1): tensors are compared by identity, never by value."""
    names = [p.name for p in w.kernel.params if isinstance(p.type, GlobalTensorType)]
    return z3.BitVecVal(names.index(name) + 1 if name in names else 0, 64)


def shown(w, key: str, number: int):
    """A tensor's code shown as its name in a failed assertion's message."""
    if not key.startswith(("tag.tensor", "tensor ")):
        return number
    names = [p.name for p in w.kernel.params if isinstance(p.type, GlobalTensorType)]
    return names[number - 1] if 0 < number <= len(names) else number


def tensor_of(w, v) -> Optional[str]:
    """The one tensor value v comes from (a tile of it, a stage TMA fills from it, a
    fragment loaded or computed from it alone), None when there is not exactly one."""
    if isinstance(v, GlobalTile):
        return v.tensor
    o = of_value(w, v)
    if isinstance(o, Origin) and len(o.tensors) == 1:
        return next(iter(o.tensors))
    return None


def why_no_tensor(w, v) -> str:
    o = of_value(w, v)
    if isinstance(o, Origin) and len(o.tensors) > 1:
        return (f"is computed from {', '.join(sorted(o.tensors))} (assert on the operands "
                f"of the product instead)")
    return "comes from no load the pass knows"


def _tile_model(w, dst: GlobalTile, actual: str, expected: str):
    """A counterexample of a TMA store: the first element of its box."""
    from . import report
    scope = w.scope_vars()
    model = report.find(w, z3.BoolVal(True), scope)
    if model is None:
        return None
    idx = tuple(bv(o) for o in dst.origin)
    return report.counterexample(w, model, scope, warpgroup=w.role.warpgroup if w.role else None,
                                 elements=(element(w, model, dst.tensor, idx, actual, expected),))
