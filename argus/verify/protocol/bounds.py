"""Indices and initialisation of the barrier arrays and staged buffers (found missing by the
mutation sweep, docs/mutation-report.md):
  - every `X[s]` of an mbarrier array and every `buf[s]` of a staged buffer is in range
    (protocol.index-bounds), symbolically over loop counters and sizes;
  - every mbarrier of an array is initialised, by some execution of an `mbarrier_init`
    (protocol.init-coverage, one solver query per barrier: arrays are small);
  - each `mbarrier_init` runs on one thread (protocol.init-once): initialised by many
    threads, a barrier's arrival count is reset while others already arrive.
"""

from __future__ import annotations

import z3

from argus.verify.smt import verdict

from . import smt
from .model import Model, array_count, stages
from .report import counterexample, finding


def _in_range_violation(m: Model, e, index, limit):
    if not (z3.is_expr(index) or isinstance(index, int)):
        return None
    if isinstance(index, int):
        return True if not 0 <= index < limit else None
    if isinstance(limit, int) and smt.below_by_construction(index, limit):
        return None
    violation = z3.UGE(smt.as_term(index), smt.as_term(limit))
    return smt.find(m.constraints + list(e.where.conds), violation,
                    [l.counter for l in e.where.loops], prefer=m.first_iteration(e.where))


def check(m: Model) -> list:
    out, seen = [], set()
    for e in m.events:
        for v in e.op.operands:
            ref = m.bars.get(v) if not isinstance(v, (int, float)) else None
            sref = m.smem.get(v) if not isinstance(v, (int, float)) else None
            if ref is not None and id(v) not in seen:
                seen.add(id(v))
                count = array_count(ref.array)
                found = _in_range_violation(m, e, ref.index, count)
                if found is not None:
                    model = found if found is not True else None
                    idx = smt.value(model, ref.index) if model is not None else ref.index
                    out.append(finding(
                        "protocol.index-bounds", e.op,
                        f"{ref.array.name}[{idx}] is outside the array of {count} mbarriers",
                        f"index the barriers modulo {count} (the stage count)",
                        counterexample(m, model, e.where)))
            if sref is not None and id(v) not in seen and sref.stage is not None:
                seen.add(id(v))
                count = stages(sref.buffer)
                found = _in_range_violation(m, e, sref.stage, count)
                if found is not None:
                    model = found if found is not True else None
                    idx = smt.value(model, sref.stage) if model is not None else sref.stage
                    out.append(finding(
                        "protocol.index-bounds", e.op,
                        f"stage {idx} of {sref.buffer.name} is outside its {count} stages",
                        f"declare the buffer with stages equal to the ring size, or index it "
                        f"modulo {count}", counterexample(m, model, e.where)))
    out += _subtiles(m)
    out += _inits(m)
    return out


def _subtiles(m: Model) -> list:
    """Every sub-tile of a stage lies inside the stage: origin + shape <= the buffer's shape
    on each axis (unsigned, so a negative origin is out too)."""
    out, seen = [], set()
    for e in m.events:
        for v in e.op.operands:
            sref = m.smem.get(v) if not isinstance(v, (int, float)) else None
            if sref is None or not sref.origin or id(v) in seen:
                continue
            seen.add(id(v))
            full = tuple(sref.buffer.type.shape)
            for axis, (o, n, limit) in enumerate(zip(sref.origin, sref.shape, full)):
                if not (z3.is_expr(o) or isinstance(o, int)):
                    continue
                if isinstance(o, int):
                    bad = not (0 <= o and o + n <= limit)
                    model = None
                    if not bad:
                        continue
                else:
                    model = smt.find(m.constraints + list(e.where.conds),
                                     z3.UGT(smt.as_term(o) + n, smt.as_term(limit)),
                                     [l.counter for l in e.where.loops])
                    if model is None:
                        continue
                at = smt.value(model, o) if model is not None else o
                at = at - (1 << smt.WIDTH) if at >= 1 << (smt.WIDTH - 1) else at
                out.append(finding(
                    "protocol.index-bounds", e.op,
                    f"this {n}-element slice of {sref.buffer.name} starts at {at} on axis "
                    f"{axis}, outside the stage's {limit}",
                    "tile the stage inside its shape: tile(buf[s], box, coords) with "
                    "coords * box + box <= the buffer's shape", counterexample(m, model, e.where)))
                break
    return out


def _inits(m: Model) -> list:
    out = []
    for array in m.arrays:
        inits = [e for e in m.opcode("mbarrier.init") if e.op.operands
                 and m.bars.get(e.op.arg("bar")) is not None
                 and m.bars[e.op.arg("bar")].array is array]
        if not inits:
            continue      # ring.py reports a barrier used without any init
        for e in inits:
            n = m.executions(e.where)
            if n > 1:
                out.append(finding(
                    "protocol.init-once", e.op,
                    f"mbarrier_init of {array.name} runs on {n} threads of each block; "
                    "each barrier must be initialised once",
                    "initialise the barriers inside `with elect_one(\"block\"):`",
                    counterexample(m, None, e.where)))
        uses = [e for e in m.events if e.op.opcode != "mbarrier.init" and any(
            not isinstance(v, (int, float)) and m.bars.get(v) is not None
            and m.bars[v].array is array for v in e.op.operands)]
        for j in range(array_count(array)):
            # initialised: the question of most barriers, asked first (no use to look up)
            if any(_can_be(m, e, m.bars[e.op.arg("bar")].index, j) for e in inits):
                continue
            if any(_can_be(m, e, _index_of(m, e, array), j) for e in uses):
                out.append(finding(
                    "protocol.init-coverage", inits[0].op,
                    f"{array.name}[{j}] is never initialised (the inits cover fewer than "
                    f"its {array_count(array)} barriers)",
                    f"initialise every barrier: for s in range({array_count(array)})",
                    counterexample(m, None, inits[0].where, (array, j))))
                break
    return out


def _index_of(m: Model, e, array):
    return next(m.bars[v].index for v in e.op.operands
                if not isinstance(v, (int, float)) and m.bars.get(v) is not None
                and m.bars[v].array is array)


def _can_be(m: Model, e, index, j: int) -> bool:
    """Some execution of `e` (its loops and conditions) has index == j."""
    if isinstance(index, int):
        return index == j
    if not z3.is_expr(index):
        return True
    trip = _free_counter_trip(m, e.where, index)
    if trip is not None:       # `for s in range(S): ...[s]`: every s below the trip runs
        return 0 <= j < trip
    # a yes/no question, asked again by the warpgroups and variants: remembered
    return verdict([*m.constraints, *e.where.conds, smt.as_term(index) == j],
                   smt.TIMEOUT_MS) != z3.unsat


def _free_counter_trip(m: Model, where, index):
    """The constant trip count of the loop whose counter `index` is, when nothing but
    constant upper bounds (its trip, the symbols' range) and no condition of `where`
    constrains that counter; else None. Every value below the trip is
    then reached (when some size is admitted at all: vacuity.py reports the assumptions no
    size satisfies)."""
    for loop in where.loops:
        if isinstance(loop.trip, int) and z3.is_expr(loop.counter) and index.eq(loop.counter):
            if any(_mentions(c, index) for c in where.conds):
                return None
            if not _only_bounded(m, index):
                return None
            return loop.trip
    return None


def _only_bounded(m: Model, var) -> bool:
    """Every constraint of the model that names `var` is an upper bound by a constant
    (`var < 4`, the loop's trip; `var < 2^24`, the range of every symbol), remembered per
    model and variable."""
    memo = m.__dict__.setdefault("_bounded_only", {})
    key = var.get_id()
    if key not in memo:
        memo[key] = all(_constant_bound(c, var) for c in m.constraints if _mentions(c, var))
    return memo[key]


def _constant_bound(c, var) -> bool:
    return (z3.is_app_of(c, z3.Z3_OP_ULT) or z3.is_app_of(c, z3.Z3_OP_ULEQ)) and \
        c.arg(0).eq(var) and z3.is_bv_value(c.arg(1))


def _mentions(term, var) -> bool:
    if not z3.is_expr(term):
        return False
    work = [term]
    while work:
        t = work.pop()
        if t.eq(var):
            return True
        work.extend(t.children())
    return False
