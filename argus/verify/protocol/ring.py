"""mbarrier rings: stage, parity, arrival counts and transaction bytes (symbolic, z3).

For a barrier array X of S mbarriers filled once per step (a role's step n, see
`model.Model.step`), the fill at step n must use stage n % S and completes phase n // S of
X[n % S]. A waiter at its step m must wait on X[m % S] and name the parity of the phase
it needs:
  forward edge (a data barrier: transaction bytes or TMA complete on it; or a plain
  signal): the phase filled at the same step, parity (m // S) & 1;
  backward edge (a release barrier closing a ring: its fillers wait on a data barrier
  that the waiter fills): the release of step m - S, parity ((m // S) & 1) ^ 1, which a
  fresh barrier satisfies for the first S steps.
Each phase needs exactly the init count of arrivals (threads executing arrive/expect_tx,
elect_one counted) and, per receiving block, expect_tx bytes equal to the bytes of the
TMA boxes that land on that block's barrier (multicast included).
"""

from __future__ import annotations

import z3

from argus.ir.nodes import Value
from argus.ir.ops import OPS
from argus.ir.types import SmemTileType
from argus.layout import symbolic as sym

from . import fanout, smt
from .model import Event, Model, array_count
from .report import counterexample, finding
from .terms import UnknownTerm

# the asynchronous copies that complete transaction bytes on their mbarrier operand `bar`,
# from the op table's effects (completes="mbarrier:bar", no arrival): tma.load, gather.tma
TMA_BAR = tuple(s.opcode for s in OPS.values()
                if s.completes == "mbarrier:bar" and not s.arrives)
# the ops each executing thread arrives with on `bar` (arrives="bar"): arrive, expect_tx,
# and gather.cp_async (one arrival per thread when its copies land)
ARRIVE_BAR = tuple(s.opcode for s in OPS.values() if s.arrives == "bar")
# the asynchronous copies that land data on a barrier by arriving: gather.cp_async
COPY_ARRIVE = tuple(s.opcode for s in OPS.values()
                    if s.arrives == "bar" and s.completes == "mbarrier:bar")
# what fills a stage with data that a barrier guards: TMA copies and arriving copies
DATA_FILLS = TMA_BAR + COPY_ARRIVE
# every op with an mbarrier operand `bar`: those, mbarrier.init/arrive/expect_tx/wait
BAR_OPS = frozenset(s.opcode for s in OPS.values() if any(o.name == "bar" for o in s.operands))


def bar_operand(e: Event):
    return e.op.arg("bar") if e.op.opcode in BAR_OPS else None


def on_array(m: Model, array: Value, *codes: str) -> list[Event]:
    out = []
    for e in m.opcode(*codes):
        ref = m.bars.get(bar_operand(e))
        if ref is not None and ref.array is array:
            out.append(e)
    return out


def is_data(m: Model, array: Value) -> bool:
    return bool(on_array(m, array, "mbarrier.expect_tx", *TMA_BAR, *COPY_ARRIVE))


def fillers(m: Model, array: Value) -> set:
    return {e.where.role for e in on_array(m, array, *ARRIVE_BAR, *TMA_BAR)}


def waiters(m: Model, array: Value) -> set:
    return {e.where.role for e in on_array(m, array, "mbarrier.wait")}


def is_backward(m: Model, array: Value) -> bool:
    """A release barrier: its fillers wait on a data barrier that its waiters fill."""
    if is_data(m, array):
        return False
    fill, wait = fillers(m, array), waiters(m, array)
    for other in m.arrays:
        if other is array or not is_data(m, other):
            continue
        if waiters(m, other) & fill and fillers(m, other) & wait:
            return True
    return False


def data_partners(m: Model, release: Value) -> list:
    """The data barriers a release barrier pairs with (full for empty): one, or several when
    a stage's buffers land on barriers of their own (attention's k_full and v_full, released
    together on kv_empty); [] when none."""
    fill, wait = fillers(m, release), waiters(m, release)
    sigs = {e.where.signature for e in on_array(m, release, "mbarrier.wait")}
    found = [other for other in m.arrays
             if other is not release and is_data(m, other) and waiters(m, other) & fill
             and fillers(m, other) & wait]
    same = [o for o in found if array_count(o) == array_count(release)
            and {e.where.signature for e in on_array(m, o, *TMA_BAR)} & sigs]
    return same or found


def main_place(m: Model, array: Value):
    """Where the waits on `array` run (or its first fill, when nobody waits on it)."""
    events = on_array(m, array, "mbarrier.wait") or on_array(m, array, *ARRIVE_BAR, *TMA_BAR)
    return events[0].where if events else None


def _same_place(a, b) -> bool:
    if a.filtered or b.filtered:    # steps counted by the user's g: compare the nest shape
        return a.filtered == b.filtered and len(a.loops) == len(b.loops)
    return a.signature == b.signature


def is_split(m: Model, e: Event, main) -> bool:
    """A fill outside the waits' loop nest, or under an `if` the waits are not under (a
    pipelined release of the previous step, the last release after the loop, ...)."""
    return main is not None and not _same_place(e.where, main)


def _cond(where):
    return z3.And(*where.conds) if where.conds else True


def _minimise(m: Model, where, *terms):
    return [*terms, *(l.counter for l in where.loops),
            *(m.terms.env[s] for s in m.kernel.symbols)]


def check(m: Model) -> list:
    out = []
    for array in m.arrays:
        out += _stages_and_parity(m, array)
        out += _arrivals(m, array)
        out += _tx_bytes(m, array)
        out += _expect_matches_load(m, array)
    return out


def _expect_matches_load(m: Model, array: Value) -> list:
    """An expect_tx and the TMA loads issued with it (same role, loops, conditions and
    elect: one block of code) arm and complete the same barrier of the array, for every
    step: the bytes are expected on the barrier that receives them. This holds in filtered
    loops too, where the ring step is the user's (an expect_tx on the next stage's
    barrier leaves the loads' barrier without expected bytes: a tx-count underflow)."""
    out, reported = [], set()
    place = lambda e: (id(e.where.role), tuple(id(l) for l in e.where.loops),
                       tuple(c.get_id() if z3.is_expr(c) else c for c in e.where.conds),
                       e.where.elect)
    loads = on_array(m, array, *TMA_BAR)
    for x in on_array(m, array, "mbarrier.expect_tx"):
        mine = [l for l in loads if place(l) == place(x)]
        if not mine:
            continue
        ix = m.bars[bar_operand(x)].index
        for l in mine:
            il = m.bars[bar_operand(l)].index
            if id(x.op) in reported:
                break
            try:
                found = m_find(m, x.where, z3.Not(smt.eq(ix, il)), 0)
            except smt.SolverUnknown:
                out.append(finding(
                    "protocol.undecided", x.op, f"whether this expect_tx arms the "
                    f"{array.name} barrier its TMA loads complete is not decided",
                    "index both with the same stage term", severity="warning"))
                reported.add(id(x.op))
                continue
            if found is None:
                continue
            reported.add(id(x.op))
            got, want = smt.value(found, ix), smt.value(found, il)
            out.append(finding(
                "protocol.expect-tx", x.op,
                f"this expect_tx arms {array.name}[{got}] but the TMA load at line "
                f"{l.op.loc.line} completes {array.name}[{want}]: the bytes land on a "
                f"barrier that expects none (and {array.name}[{got}] waits for bytes that "
                "never come)", f"expect the bytes on the barrier the loads complete: "
                f"expect_tx({array.name}[s], ...) with the same s as the tma_load",
                counterexample(m, found, x.where, (array, ix))))
    return out


def ring_size(m: Model, array: Value) -> int:
    """The ring's stage count: the array's length, or the one constant modulus every fill and
    wait indexes it with when that is smaller (a spare barrier past the ring is harmless)."""
    count = array_count(array)
    moduli = set()
    for e in on_array(m, array, *ARRIVE_BAR, "mbarrier.wait", *TMA_BAR):
        t = m.bars[bar_operand(e)].index
        if not z3.is_expr(t):
            return count
        t = smt.as_term(t)
        if t.decl().kind() not in (z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I) or \
                not z3.is_bv_value(t.arg(1)):
            return count
        moduli.add(t.arg(1).as_long())
    if len(moduli) == 1:
        d = moduli.pop()
        if 0 < d <= count:
            return d
    return count


def _stages_and_parity(m: Model, array: Value) -> list:
    out = []
    S = ring_size(m, array)
    backward = is_backward(m, array)
    fill_events = on_array(m, array, *ARRIVE_BAR, *TMA_BAR)
    fill_sigs = {e.where.signature for e in fill_events}
    main = main_place(m, array)
    for e in fill_events + on_array(m, array, "mbarrier.wait"):
        ref = m.bars[bar_operand(e)]
        if e.op.opcode != "mbarrier.wait" and is_split(m, e, main):
            if m.ring_step(Where_filtered(e.where), ref.index, S) is None and S > 1:
                out.append(finding(
                    "protocol.unmodelled", e.op,
                    f"this fill of {array.name} runs outside the loop nest of its waits and "
                    f"its stage is not written g % {S}: its stage is not checked",
                    f"index the ring with the step it releases: {array.name}[g % {S}]",
                    severity="warning"))
            continue
        n = m.ring_step(e.where, ref.index, S)
        if n is None and not e.where.filtered and e.op.opcode == "mbarrier.wait":
            out.append(finding(
                "protocol.unmodelled", e.op,
                f"the trip count of a loop around this wait on {array.name} changes from one "
                "iteration of the loop around it to the next, so its steps are not counted: "
                "stage and parity are not checked",
                "inside a schedule, number the steps of a loop whose trip changes per tile "
                "with g = walked(trip) + j (the loop directly in the schedule's body)",
                severity="warning"))
            continue
        if n is None:
            if e.op.opcode == "mbarrier.wait":
                out.append(finding(
                    "protocol.unmodelled", e.op,
                    f"this wait on {array.name} runs on some iterations only and its stage "
                    f"is not written g % {S}: stage and parity are not checked",
                    f"count the steps that run in g and use {array.name}[g % {S}]",
                    severity="warning"))
            continue
        if e.where.filtered and e.op.opcode != "mbarrier.wait" and backward:
            out += _filtered_release(m, array, e, n, S)
            continue
        stage = sym.umod(smt.as_term(n), S) if sym.is_symbolic(n) else n % S
        found = None if e.where.filtered else \
            m_find(m, e.where, z3.Not(smt.eq(ref.index, stage)), n)
        if found is not None:
            idx, want = smt.value(found, ref.index), smt.value(found, stage)
            out.append(finding(
                "protocol.stage", e.op,
                f"at step {smt.value(found, n)} this uses {array.name}[{idx}], but the "
                f"ring of {S} barriers is at stage {want} (step % {S})",
                f"index the ring with the global step: {array.name}[g % {S}], g counting "
                f"every step of the loops around it", counterexample(
                    m, found, e.where, (array, ref.index))))
            continue
        if e.op.opcode != "mbarrier.wait":
            continue
        if not e.where.filtered and e.where.signature not in fill_sigs:
            out.append(finding(
                "protocol.unmodelled", e.op,
                f"the wait on {array.name} and its fills run in different loop nests; its "
                "parity is not checked", "wait and fill in loops with the same trip counts",
                severity="warning"))
            continue
        try:
            parity = m.terms.of(e.op.arg("phase"))
        except UnknownTerm:
            continue
        from .terms import _num
        parity = _num(parity)
        q = sym.udiv(smt.as_term(n), S) if sym.is_symbolic(n) else n // S
        expected = sym.band(smt.as_term(q) if sym.is_symbolic(q) else q, 1)
        if backward:
            expected = sym.xor(expected, 1)
        found = m_find(m, e.where, z3.Not(smt.eq(parity, expected)), n)
        if found is None:
            continue
        step, got, want = (smt.value(found, x) for x in (n, parity, expected))
        idx = smt.value(found, ref.index)
        if backward:
            why = (f"the release of {array.name}[{idx}] it needs (by step {step - S}) "
                   f"completes the phase of parity {want}" if step >= S else
                   f"no release is due before step {S}, so it must wait on parity {want} "
                   "(a fresh barrier passes it)")
            hint = f"wait({array.name}[s], ((g // {S}) & 1) ^ 1) with g the global step"
        else:
            why = f"the fill of {array.name}[{idx}] at step {step} completes the phase of parity {want}"
            hint = f"wait({array.name}[s], (g // {S}) & 1) with g the global step"
        effect = ("it returns before that phase completes (a stale stage is read)"
                  if got != want else "")
        out.append(finding(
            "protocol.parity", e.op,
            f"at step {step} this waits on {array.name}[{idx}] for parity {got}, but {why}"
            + (f"; {effect}" if effect else ""), hint,
            counterexample(m, found, e.where, (array, ref.index),
                           {"parity": got, "expected_parity": want})))
    return out


def Where_filtered(where):
    """The same place, read as filtered: its step is the user's counter g of g % S."""
    from dataclasses import replace
    return replace(where, filtered=True)


def m_find(m: Model, where, violation, n):
    conds = list(where.conds)
    return smt.find(m.constraints + conds, violation, _minimise(m, where, n),
                    prefer=m.first_iteration(where))


def _inits(m: Model, array: Value) -> list[Event]:
    return on_array(m, array, "mbarrier.init")


def _rank_vars(m: Model) -> list:
    return [m.terms.env[e.op.result] for e in m.opcode("cluster_rank")
            if e.op.result in m.terms.env]


def _at_rank(m: Model, term, b: int):
    """term with every cluster_rank() replaced by b (the issuing block)."""
    ranks = _rank_vars(m)
    if not ranks or not z3.is_expr(term):
        return term
    return z3.substitute(term, *[(v, smt.as_term(b)) for v in ranks])


def _arrivals(m: Model, array: Value) -> list:
    inits = _inits(m, array)
    fills = on_array(m, array, *ARRIVE_BAR)
    if not inits or not fills:
        return []
    count = inits[0].op.attrs.get("arrivals", 1)
    main = main_place(m, array)
    split = [e for e in fills if is_split(m, e, main)]
    if split:
        released = _split_releases(m, array, fills, count)
        if released is not None:
            return released
        lines = ", ".join(str(e.op.loc.line) for e in fills)
        return [finding(
            "protocol.unmodelled", split[0].op,
            f"the arrivals on {array.name} are split across loop nests or branches (lines "
            f"{lines}); the arrival count per phase is not checked",
            "keep one arrive per step in the loop of the waits, or check the count by hand",
            severity="warning")]
    C = m.cluster_size
    for r in range(C):      # arrivals that reach block r's barrier, from every block b
        total, parts = 0, []
        for e in fills:
            total = _plus(total, fanout.arrivals_at(m, e, r))
            n = m.executions(e.where) * _fanout_trips(e.where)
            who = e.where.role.name if e.where.role else "every warpgroup"
            parts.append(f"{n} per block at line {e.op.loc.line} ({who})")
        violation = z3.Not(smt.eq(total, count))
        if isinstance(violation, bool):
            found = True if violation else None
        elif z3.is_false(z3.simplify(violation)):
            found = None
        else:
            found = m_find(m, fills[0].where, violation, m.step(fills[0].where))
        if found is None:
            continue
        model = found if found is not True else None
        got = smt.value(model, total) if model is not None else total
        copies = [e for e in fills if e.op.opcode in COPY_ARRIVE]
        fix = (f"mbarrier_init({array.name}[s], {got}): each thread that runs the gather at "
               f"line {copies[0].op.loc.line} arrives once, besides the other arrivals"
               if copies and got > count else
               "arrive inside `with elect_one():` (one arrival per warpgroup)" if got > count
               else f"mbarrier_init({array.name}[s], {got}) or add the missing arrivals" if got
               else "add the missing arrivals (arrive(bar, cta=r) reaches block r)")
        ref = m.bars[bar_operand(fills[0])]
        where = f" of block {r} in the cluster" if C > 1 else ""
        # a copy that arrives per thread (a warpgroup's cp.async gather) brings most of the
        # arrivals a count must include: the finding stands at it
        anchor = next((e for e in fills if e.op.opcode in COPY_ARRIVE), fills[0])
        return [finding(
            "protocol.arrival-count", anchor.op,
            f"each phase of {array.name}[s]{where} gets {got} arrivals ({', '.join(parts)}) "
            f"but mbarrier_init at line {inits[0].op.loc.line} counts {count}: "
            + ("the phase completes early" if got > count else "the phase never completes"),
            fix, counterexample(m, model, anchor.where,
                                (array, ref.index if model is not None else 0),
                                block=(r,) if C > 1 else None))]
    return []


def _tx_bytes(m: Model, array: Value) -> list:
    expects = on_array(m, array, "mbarrier.expect_tx")
    loads = on_array(m, array, *TMA_BAR)
    if not loads and not expects:
        return []
    ranks = [m.terms.env[e.op.result] for e in m.opcode("cluster_rank")
             if e.op.result in m.terms.env]
    C = m.cluster_size
    out = []
    anchor = expects[0] if expects else loads[0]
    for r in range(C):
        def at_rank(term, b):
            if not sym.is_symbolic(term) and not z3.is_expr(term):
                return term
            return z3.substitute(term, *[(v, smt.as_term(b)) for v in ranks]) if ranks \
                else term
        expected, landed = 0, 0
        for e in expects:
            try:
                nbytes = m.terms.of(e.op.arg("bytes"))
            except UnknownTerm:
                return []
            amount = smt.select(_cond(e.where), m.executions(e.where), 0) if e.where.conds \
                else m.executions(e.where)
            expected = _plus(expected, at_rank(m.terms.mul(amount, nbytes), r))
        for e in loads:
            dst = e.op.arg("dst").type
            size = dst.nbytes if isinstance(dst, SmemTileType) else 0
            mask = e.op.arg("multicast") if e.op.opcode == "tma.load" else None
            for b in range(C):
                amount = m.executions(e.where) * size
                if mask is None:
                    if b != r:
                        continue
                    got = amount
                else:
                    bits = at_rank(m.terms.of(mask), b)
                    bit = sym.band(sym.lshr(smt.as_term(bits), r), 1) \
                        if sym.is_symbolic(bits) else (bits >> r) & 1
                    got = m.terms.mul(bit, amount) if sym.is_symbolic(bit) else bit * amount
                if e.where.conds:
                    got = at_rank(smt.select(_cond(e.where), got, 0), b)
                landed = _plus(landed, got)
        violation = z3.Not(smt.eq(expected, landed))
        if isinstance(violation, bool) or z3.is_false(z3.simplify(violation)):
            continue
        found = m_find(m, anchor.where, violation, m.step(anchor.where))
        if found is None:
            continue
        want, got = smt.value(found, landed), smt.value(found, expected)
        boxes = ", ".join(f"{e.op.arg('dst').type.buffer} {e.op.arg('dst').type.nbytes} B "
                          f"at line {e.op.loc.line}" + (" (multicast)" if _multicast(e) else "")
                          for e in loads)
        ref = m.bars[bar_operand(anchor)]
        where = f" of block {r} in the cluster" if C > 1 else ""
        out.append(finding(
            "protocol.expect-tx", anchor.op,
            f"{array.name}[s]{where} expects {got} transaction bytes per phase but {want} "
            f"land on it ({boxes or 'no TMA box'}): "
            + ("the phase never completes" if got > want else
               "the phase completes before every box has landed"),
            f"expect_tx({array.name}[s], ...) with the bytes of every box that lands on this "
            "block's barrier" + (", counting the peers' multicast boxes" if C > 1 else ""),
            counterexample(m, found, anchor.where, (array, ref.index),
                           block=(r,) if C > 1 else None)))
        break
    return out


def _multicast(e: Event) -> bool:
    """A TMA load with a multicast mask (gather.tma has none)."""
    return e.op.opcode == "tma.load" and e.op.arg("multicast") is not None


def _plus(a, b):
    if not (sym.is_symbolic(a) or sym.is_symbolic(b)):
        return a + b
    return smt.as_term(a) + smt.as_term(b)


def _ring_index(m: Model, e: Event, stages: int):
    """X of a fill or wait on stage X % stages (the step it belongs to), or None."""
    t = m.bars[bar_operand(e)].index
    if not z3.is_expr(t):
        return None
    t = smt.as_term(t)
    if t.decl().kind() in (z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I):
        d = t.arg(1)
        if z3.is_bv_value(d) and d.as_long() == stages:
            return t.arg(0)
    return None


def _split_releases(m: Model, array: Value, fills: list, count: int):
    """Arrivals split over places in one role (a pipelined release: the stage of step g - 1
    freed at step g, the last one after the loop). Checked per step of that role's ring:
    every step n of the role's own (unfiltered) waits in the innermost loop gets exactly
    `count` arrivals, each fill contributing when some execution of it releases stage
    X == n. A fill in the waits' loop is matched by solving its X, which must advance by
    one per iteration, for its iteration; a fill outside that loop by X == n directly
    (the same outer iteration). Returns findings, [] when it holds, or None when the
    fills do not have this shape (then the caller warns that the count is not checked)."""
    stages = ring_size(m, array)
    roles = {e.where.role for e in fills}
    if len(roles) != 1 or None in roles:
        return None
    role = next(iter(roles))
    # the reference numbering: the role's own unfiltered waits in the deepest loop nest
    # that extends every fill's loops (the consumer's waits on the data ring)
    def extends(w, e):
        ours = [l.counter for l in e.where.loops]
        return [l.counter for l in w.where.loops[:len(ours)]] == ours
    candidates = [w for w in m.opcode("mbarrier.wait") if w.where.role is role
                  and not w.where.filtered and w.where.loops
                  and all(extends(w, e) for e in fills)]
    if not candidates:
        return None
    ref = max(candidates, key=lambda w: len(w.where.loops))
    inner = ref.where
    loop = inner.loops[-1]
    n = _ring_index(m, ref, array_count(m.bars[bar_operand(ref)].array))
    if n is None:
        return None
    c = smt.as_term(loop.counter)
    n0 = z3.substitute(smt.as_term(n), (c, smt.as_term(0)))    # the iteration's first step
    trip = smt.as_term(loop.trip)
    hits = []         # (fill, the condition under which it releases step n)
    outside = []      # (fill, violation): an execution releasing a step of another iteration
    for e in fills:
        x = _ring_index(m, e, stages)
        if x is None:
            return None
        k = e.where.loops
        if len(k) == len(inner.loops) and k[-1].counter is loop.counter:
            # X(c') = X(0) + c' for every c' (else: not this shape)
            fresh = smt.var(f"release_{e.op.loc.line}")
            x0 = z3.substitute(x, (c, smt.as_term(0)))
            if smt.find(m.constraints, z3.substitute(x, (c, fresh)) - x0 != fresh) is not None:
                return None
            at = n - x0                         # the iteration whose release is step n
            cond = z3.And(*[z3.substitute(smt.bool_of(q), (c, at)) for q in e.where.conds]) \
                if e.where.conds else True
            hit = z3.And(z3.ULT(at, trip), cond)
            own = z3.And(*[smt.bool_of(q) for q in e.where.conds]) if e.where.conds else True
            outside.append((e, z3.And(z3.ULT(c, trip), own,
                                      z3.UGE(smt.as_term(x) - n0, trip))))
        elif [l.counter for l in k] == [l.counter for l in inner.loops[:len(k)]] \
                and len(k) < len(inner.loops):
            hit = smt.as_term(x) == n
            own = True
            if e.where.conds:
                own = z3.And(*[smt.bool_of(q) for q in e.where.conds])
                hit = z3.And(hit, own)
            outside.append((e, z3.And(own, z3.UGE(smt.as_term(x) - n0, trip))))
        else:
            return None
        hits.append((e, hit))
    for e, escape in outside:
        found = smt.find(m.constraints, escape, _minimise(m, e.where, c),
                         prefer=m.first_iteration(e.where))
        if found is not None:
            step = smt.value(found, _ring_index(m, e, stages))
            step = step - (1 << smt.WIDTH) if step >= 1 << (smt.WIDTH - 1) else step
            return [finding(
                "protocol.arrival-count", e.op,
                f"this release frees the stage of step {step} of {array.name}, a step of "
                "another iteration: its phase gets an arrival twice or never",
                "release step g - 1 only when the loop has a previous step (if k > 0), and "
                "the last step after the loop", counterexample(m, found, e.where, (array, 0)))]
    within = z3.ULT(c, trip)
    lines = ", ".join(str(e.op.loc.line) for e in fills)
    for r in range(m.cluster_size):    # per receiving block: the releases of every block
        total = 0
        for e, hit in hits:
            total = _plus(total, fanout.arrivals_at(m, e, r, when=hit))
        violation = z3.And(within, z3.Not(smt.eq(total, count)))
        found = smt.find(m.constraints, violation, _minimise(m, ref.where, c),
                         prefer=m.first_iteration(ref.where))
        if found is None:
            continue
        got = smt.value(found, total)
        step = smt.value(found, n)
        where = f" in block {r} of the cluster" if m.cluster_size > 1 else ""
        return [finding(
            "protocol.arrival-count", fills[0].op,
            f"the stage of step {step} of {array.name}{where} gets {got} arrivals from the "
            f"releases at lines {lines}, but mbarrier_init counts {count}: "
            + ("the phase completes early" if got > count else "the phase never completes"),
            _split_fix(m, got, count),
            counterexample(m, found, ref.where, (array, 0),
                           block=(r,) if m.cluster_size > 1 else None))]
    return []


def _filtered_release(m: Model, array: Value, e: Event, n, S: int) -> list:
    """A release in a filtered walk (steps numbered by the user's g): the step it frees
    must be its role's own step (every step released where it ends) or the one before
    (the pipelined release of step g - 1 at step g, run for every step but the first).
    The role's step is that of its wait on the partner data ring in the same loop body;
    the release's own ifs (beyond the wait's) must run it at every step, or at every step
    but the first. A release of another step, or skipping or adding one, makes a phase
    complete early (a race) or never (a deadlock)."""
    same = [l.counter for l in e.where.loops]
    refs = [w for partner in data_partners(m, array)
            for w in on_array(m, partner, "mbarrier.wait")
            if w.where.role is e.where.role and w.where.filtered
            and [l.counter for l in w.where.loops] == same]
    g = None
    for w in refs:
        g = m.ring_step(w.where, m.bars[bar_operand(w)].index, S)
        if g is not None:
            break
    if g is None:
        return [finding(
            "protocol.unmodelled", e.op,
            f"this release of {array.name} runs in a walk whose steps the kernel numbers "
            f"itself, with no wait on its data ring beside it: the step it frees is not "
            f"checked", f"release {array.name}[g % {S}] in the loop of the step's wait",
            severity="warning")]
    wait_conds = list(refs[0].where.conds)
    extra = [c for c in e.where.conds if not any(c.eq(d) for d in wait_conds)]
    runs = z3.And(*[smt.bool_of(c) for c in extra]) if extra else z3.BoolVal(True)
    known = [*m.constraints, *[smt.bool_of(c) for c in wait_conds]]
    g, n = smt.as_term(g), smt.as_term(n)
    if smt.find(known, n != g) is None:
        want, what = z3.BoolVal(True), "at every step"
    elif smt.find(known, n != g - 1) is None:
        want, what = g != 0, "at every step but the first"
    else:
        found = smt.find(known, z3.And(n != g, n != g - 1), _minimise(m, e.where, g),
                         prefer=m.first_iteration(e.where))
        signed = lambda v: v - (1 << smt.WIDTH) if v >= 1 << (smt.WIDTH - 1) else v
        at = f" (at step {smt.value(found, g)} it frees step {signed(smt.value(found, n))})" \
            if found is not None else ""
        return [finding(
            "protocol.stage", e.op,
            f"this release of {array.name} frees the stage of a step that is neither its "
            f"role's step nor the one before{at}: a phase completes early or never",
            f"release the step's own stage ({array.name}[g % {S}]) or, pipelined, the "
            f"previous step's ({array.name}[(g - 1) % {S}] under `if g > 0`)",
            counterexample(m, found, e.where, (array, 0)) if found is not None else None)]
    # the least step, counters and sizes of a violation: a small run that the replay
    # walks (an unminimised model had T = 2^24 and did not replay in its step budget)
    found = smt.find(known, runs != want, _minimise(m, e.where, g),
                     prefer=m.first_iteration(e.where))
    if found is None:
        return []
    skipped = z3.is_true(found.eval(want, model_completion=True))
    return [finding(
        "protocol.arrival-count", e.op,
        f"this release of {array.name} must run {what} of its role, but at step "
        f"{smt.value(found, g)} it "
        + ("does not (that step's stage is never freed)" if skipped else
           "runs too (freeing a stage no step filled)")
        + f": a phase of {array.name} completes early or never",
        f"guard the pipelined release with `if g > 0` only (every step but the first)",
        counterexample(m, found, e.where, (array, 0)))]


def _split_fix(m, got: int, count: int) -> str:
    if m.cluster_size == 1:
        return ("release each step's stage exactly once (the previous step's inside the "
                "loop, the last one after it)")
    if got < count:
        return ("release the stage in every block of the cluster that wrote into it, once "
                "per consumer warpgroup: for r in range(CM): arrive(bar, cta=r)")
    return (f"the consumers of the cluster's blocks release each stage {got} times per "
            f"phase: count them all in mbarrier_init (mbarrier_init(bar, {got}))")


def _fanout_trips(where) -> int:
    n = 1
    for loop in where.fanout:
        n *= loop.trip
    return n
