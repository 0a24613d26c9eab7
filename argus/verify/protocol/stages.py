"""Shared-memory stages of a TMA ring: no stage refilled before its readers released it,
no stage released before the reads of it retired, no stage read before its data landed.

For a release barrier E paired with a data barrier D (empty with full; see ring.py) the
guarded buffers are those whose TMA loads (or a warpgroup's cp.async gather) complete on D. Then, within one step of each
role (symbolic over the step with z3):
  producer: a TMA load into a guarded buffer follows a wait on E[same stage];
  readers:  a read (wgmma operand, ldmatrix, load) of a guarded stage follows a wait on
            D[same stage];
  releaser: the arrive on E[s] comes after every wgmma reading stage s retired
            (wgmma_wait), including groups left in flight by the previous step.
"""

from __future__ import annotations

import z3

from argus.layout import symbolic as sym

from argus.ir.ops import OPS

from . import smt
from .model import Event, Model, stages
from .report import counterexample, finding
from .ring import (DATA_FILLS, _minimise, data_partners, fillers, is_backward, is_data, m_find,
                   on_array, waiters)

# the operands each op reads, from the op table; only shared-memory tiles (m.smem) matter
# here: wgmma's a and b, ldmatrix's and load's src, tma.store's src
READS = {spec.opcode: spec.reads for spec in OPS.values() if spec.reads}


def _same_body(a: Event, b: Event) -> bool:
    return a.where.role is b.where.role and a.where.loops == b.where.loops


def _encloses(w: Event, e: Event) -> bool:
    """w runs in e's role, in e's loop nest or one around it."""
    n = len(w.where.loops)
    return w.where.role is e.where.role and w.where.loops == e.where.loops[:n]


def _smem_reads(m: Model, e: Event):
    for name in READS.get(e.op.opcode, ()):
        ref = m.smem.get(e.op.arg(name))
        if ref is not None:
            yield ref


def check(m: Model) -> list:
    out = []
    for data in m.arrays:
        if is_data(m, data):
            out += _reads_before_data(m, data, _guarded(m, data))
    for data in m.arrays:
        if is_data(m, data):
            out += _refills(m, data, on_array(m, data, *DATA_FILLS))
    for release in m.arrays:
        if not is_backward(m, release):
            continue
        guarded = set()
        for data in data_partners(m, release):     # every buffer the release frees
            guarded |= _guarded(m, data)
        if guarded:
            out += _early_release(m, release, guarded)
    return out


def _guarded(m: Model, data) -> set:
    return {m.smem[e.op.arg("dst")].buffer for e in on_array(m, data, *DATA_FILLS)
            if e.op.arg("dst") in m.smem}


def _release_of(m: Model, data):
    """The release barrier readers of `data`'s stages arrive on (empty for full)."""
    readers = waiters(m, data)
    for other in m.arrays:
        if other is not data and not is_data(m, other) and fillers(m, other) & readers:
            return other
    return None


def _refills(m: Model, data, loads) -> list:
    out = []
    release = _release_of(m, data)
    waits = [w for w in m.opcode("mbarrier.wait") if m.bars[w.op.arg("bar")].array is not data]
    for e in loads:
        ref = m.smem.get(e.op.arg("dst"))
        if ref is None or not e.where.loops:
            continue
        S = stages(ref.buffer)
        prior = [w for w in waits if _same_body(w, e) and w.order < e.order]
        n = m.ring_step(e.where, ref.stage, S)
        if n is None:
            continue
        name = release.name if release is not None else "the readers' release barrier"
        if not prior:
            found = m_find(m, e.where, smt.le(S, n), n)
            if found is None:
                continue
            step = smt.value(found, n)
            out.append(finding(
                "protocol.stage-reuse", e.op,
                f"this {_fill(e)} refills {ref.buffer.name}[{step % S}] at step {step} without "
                f"waiting on {name}: the readers of step {step - S} may still be "
                "reading that stage", f"wait({name}[s], ((g // {S}) & 1) ^ 1) before "
                "the loads of step g", counterexample(
                    m, found, e.where, (release, ref.stage) if release is not None else None,
                    {"overwritten_step": step - S})))
            continue
        bar = m.bars[prior[-1].op.arg("bar")]
        found = m_find(m, e.where, z3.Not(smt.eq(bar.index, ref.stage)), n)
        if found is not None:
            out.append(finding(
                "protocol.stage-reuse", e.op,
                f"this {_fill(e)} writes {ref.buffer.name}[{smt.value(found, ref.stage)}] but "
                f"the wait before it (line {prior[-1].op.loc.line}) is on "
                f"{release.name}[{smt.value(found, bar.index)}]",
                "wait on the release barrier of the stage you refill",
                counterexample(m, found, e.where, (release, bar.index))))
    return out


def _fill(e: Event) -> str:
    return "TMA load" if e.op.opcode in ("tma.load", "gather.tma") else "gather"


def _reads_before_data(m: Model, data, guarded) -> list:
    out = []
    waits = on_array(m, data, "mbarrier.wait")
    for e in m.events:
        for ref in _smem_reads(m, e):
            if ref.buffer not in guarded:
                continue
            prior = [w for w in waits if _encloses(w, e) and w.order < e.order]
            n = m.step(e.where)
            if not prior:
                found = m_find(m, e.where, True, n)
                out.append(finding(
                    "protocol.smem-race", e.op,
                    f"this reads {ref.buffer.name}[s], which TMA fills asynchronously, "
                    f"without a wait on {data.name} before it in the same step",
                    f"wait({data.name}[s], (g // S) & 1) before reading stage s",
                    counterexample(m, found, e.where, (data, ref.stage))))
                continue
            bar = m.bars[prior[-1].op.arg("bar")]
            found = m_find(m, e.where, z3.Not(smt.eq(bar.index, ref.stage)), n)
            if found is not None:
                out.append(finding(
                    "protocol.smem-race", e.op,
                    f"this reads {ref.buffer.name}[{smt.value(found, ref.stage)}] but waited "
                    f"on {data.name}[{smt.value(found, bar.index)}] (line "
                    f"{prior[-1].op.loc.line})", "read the stage whose barrier you waited on",
                    counterexample(m, found, e.where, (data, bar.index))))
    return out


def _simulate(body: list[Event], until: int, groups=()):
    """Replay wgmma.mma / commit / wait of `body` (program order) up to order `until`,
    starting from committed `groups` (lists of (event, from_previous_step)). Returns the
    open (uncommitted) wgmmas and the committed groups still in flight."""
    open_, groups = [], [list(g) for g in groups]
    for e in body:
        if e.order >= until:
            break
        code = e.op.opcode
        if code == "wgmma.mma":
            open_.append((e, False))
        elif code == "wgmma.commit" and open_:
            groups.append(open_)
            open_ = []
        elif code == "wgmma.wait":
            keep = int(e.op.attrs.get("pending", 0))
            groups = groups[len(groups) - keep:] if keep else []
    return open_, groups


def _nested(a: Event, e: Event) -> bool:
    """e runs in a's role, in a's loop nest or in loops inside it."""
    n = len(a.where.loops)
    return e.where.role is a.where.role and e.where.loops[:n] == a.where.loops


def _early_release(m: Model, release, guarded) -> list:
    out = []
    for a in on_array(m, release, "mbarrier.arrive"):
        body = [e for e in m.events if _nested(a, e)]
        idx = m.bars[a.op.arg("bar")].index
        n = m.step(a.where)
        start = []
        if a.where.loops:   # what the previous iteration left in flight
            left_open, left = _simulate(body, 1 << 60)
            start = [[(e, True) for e, _ in g] for g in left] + \
                ([[(e, True) for e, _ in left_open]] if left_open else [])
        open_, groups = _simulate(body, a.order, start)
        candidates = open_ + [x for g in groups for x in g]
        for e, previous in candidates:
            for ref in _smem_reads(m, e):
                if ref.buffer not in guarded:
                    continue
                stage, extra = ref.stage, []
                if previous:
                    j = a.where.loops[-1].counter
                    if not sym.is_symbolic(stage):
                        continue
                    stage = z3.substitute(smt.as_term(stage), (j, j - 1))
                    extra = [smt.le(1, j)]
                found = smt.find(m.constraints + extra + list(a.where.conds),
                                 smt.eq(stage, idx), _minimise(m, a.where, n),
                                 prefer=m.first_iteration(a.where))
                if found is None:
                    continue
                when = "of the previous step " if previous else ""
                out.append(finding(
                    "protocol.stage-reuse", a.op,
                    f"this releases {release.name}[{smt.value(found, idx)}] while the wgmma "
                    f"{when}at line {e.op.loc.line} reading {ref.buffer.name}"
                    f"[{smt.value(found, idx)}] may still be in flight: the producer can "
                    "overwrite the stage under it",
                    f"call wgmma_wait(...) so that the wgmma reading the stage has retired "
                    f"before arrive({release.name}[s])",
                    counterexample(m, found, a.where, (release, idx))))
                return out
    return out
