"""Waits that can be lapped: an mbarrier parity wait by threads whose progress the barrier
does not wait for.

`wait(bar, parity)` returns once the phase of that parity has completed. The parity names
one of two phases, so it is only meaningful to a thread that can be at most one phase
behind. That holds when the barrier's next phase waits for something the thread does after
the wait: its own arrival, a TMA it issues, a warpgroup-collective wgmma it takes part in.

When every thread of a role waits but only the elected one acts on what the wait guards,
nothing ties the other warps to the barrier:

    with role("producer", warpgroups=(0,)):
        for k in range(KT):
            wait(empty[s], ...)          # 128 threads wait
            with elect_one():            # one thread issues the TMA the consumers wait for
                tma_load(...)

The elected thread and the consumers can complete two phases of `empty[s]` while warp 1 is
still in the loop's index arithmetic. When warp 1 reaches its wait, the parity it asks for
has flipped back, and it waits for a phase that never comes (a deadlock). This was seen on
the H200 in moe_down with 64 experts: the producer's first wait on empty[0] had parity 1,
and warps 1-3 stayed there forever. The interpreter does not show it, because it moves the
warps of a role together.

  barriers.lapped-wait   a wait in a loop, outside elect_one, after which every act of
                         the waiting threads up to the end of the loop body (or their next
                         wait) is inside elect_one: the other warps can be lapped

The fix is to move the wait into the elect_one block, or better, the whole loop: one thread
walks the steps and the others leave the role (on the H200 the GEMM was 5% slower with the
wait inside each step's elect_one while the other warps ran the loop freely).
"""

from __future__ import annotations

from dataclasses import replace

import z3

from argus.limits import WARPGROUP_THREADS
from argus.verify.finding import Finding
from argus.verify.protocol import smt
from argus.verify.protocol.model import Event, Model
from argus.verify.protocol.report import counterexample, finding

WAIT = "mbarrier.wait"
UNDECIDED = object()
# ops that compute addresses and indices, or open structure: doing only these after a
# wait is doing nothing another thread waits for
PASSIVE = ("arith.", "indices.", "segment", "tile", "smem.stage", "mbarrier.at", "for", "if",
           "elect_one", "cdiv", "coord", "warpgroup_index", "block_id", "const")


def check_model(m: Model) -> list[Finding]:
    out = []
    events = sorted(m.events, key=lambda e: e.order)
    for i, w in enumerate(events):
        if w.op.opcode != WAIT or w.where.elect is not None or not w.where.loops:
            continue
        if w.where.role is None:
            continue
        elected = _guarded_only_by_elected(events[i + 1:], w)
        if elected:
            cex = _witness(m, w)
            if cex is not None:          # a wait that never runs cannot hang
                out.append(_report(w, elected, None if cex is UNDECIDED else cex))
    return out


def _inside(e: Event, w: Event) -> bool:
    """Is e in the body of w's innermost loop (at w's depth or deeper)?"""
    loops = w.where.loops
    return (e.where.role is w.where.role and len(e.where.loops) >= len(loops)
            and all(a is b for a, b in zip(e.where.loops, loops)))


def _guarded_only_by_elected(after: list[Event], w: Event) -> list[Event]:
    """The elected acts that follow w in its loop body, when the waiting threads do nothing
    else there; [] when they take part in something (or nothing acts at all)."""
    elected = []
    for e in after:
        if not _inside(e, w):
            break
        if e.op.opcode == WAIT and e.where.elect is None and len(e.where.loops) == len(w.where.loops):
            break                         # the next wait guards what follows it
        if e.op.opcode.startswith(PASSIVE):
            continue
        if e.where.elect is None:
            return []                     # every waiting thread acts: it cannot be lapped
        elected.append(e)
    return elected


def _report(w: Event, elected: list[Event], cex) -> Finding:
    role = w.where.role
    threads = WARPGROUP_THREADS * len(role.warpgroups)
    lines = sorted({e.op.loc.line for e in elected})
    shown = ", ".join(map(str, lines[:4])) + (", ..." if len(lines) > 4 else "")
    message = (f"this wait is executed by all {threads} threads of role {role.name}, but what "
               f"it guards (line{'s' if len(lines) > 1 else ''} {shown}) is done by the elected "
               "thread only: the other warps' progress gates nothing, so the barrier can "
               "complete two phases while one of them is still in the loop, and it then waits "
               "on a parity that has flipped back (a deadlock; seen on the H200 with "
               "moe_down at 64 experts)")
    hint = ("move the wait into the elect_one block, or put the whole loop inside one "
            "elect_one() so that one thread walks the steps")
    return finding("barriers.lapped-wait", w.op, message, hint, cex)


def _witness(m: Model, w: Event):
    """The first iteration at which the wait runs, at warp 1 of the role (a warp that does
    not hold the elected thread); None when it never runs, UNDECIDED when the solver gave
    up (the structure alone is the finding then)."""
    where = w.where
    conds = [smt.bool_of(c) for c in where.conds]
    conds += [smt.lt(l.counter, l.trip) for l in where.loops if not isinstance(l.trip, int)]
    if any(c is False for c in conds):
        return None
    conds = [c for c in conds if not isinstance(c, bool)]
    here = z3.And(*conds) if conds else z3.BoolVal(True)
    smallest = [l.counter for l in where.loops] + [m.terms.env[s] for s in m.kernel.symbols]
    try:
        found = smt.find(m.constraints, here, smallest, prefer=m.first_iteration(where))
    except smt.SolverUnknown:
        return UNDECIDED
    if found is None:
        return None
    cex = counterexample(m, found, where)
    wg = where.role.warpgroups[0]
    return replace(cex, warpgroup=wg, warp=wg * 4 + 1, thread=wg * WARPGROUP_THREADS + 32,
                   lane=0)
