"""Barrier participation: every bar.sync is reached by exactly the threads it waits for.

  barriers.participation  sync_block() (bar.sync 0, __syncthreads) and cluster_sync() wait
                          for every thread of the block: one reached only inside a role, a
                          branch on the warpgroup, or a loop whose trip count depends on it
                          waits forever for the warpgroups that never come
  barriers.count          named_barrier(id, n) (bar.sync id, n) releases when n threads
                          have arrived: the warpgroups that reach it (its role's, narrowed by
                          branches on warpgroup_index(), plus every other role that syncs on
                          the same id with the same count, plus the warpgroups of its own
                          role that sync on it at another point of the same loop body, a
                          ping-pong) must number exactly n / 128, none arriving twice;
                          fewer deadlock, more release early and mix two phases; two roles
                          using one id with different counts disagree
  barriers.elected        a bar.sync inside elect_one(): bar.sync is executed by whole warps,
                          so one thread of a warp (or of a warpgroup) cannot take part
  barriers.lapped-wait    an mbarrier wait by threads that gate nothing after it (only the
                          elected thread acts): they can fall two phases behind and wait
                          forever (argus/verify/lapped.py)
  barriers.undecided      (warning) which warpgroups reach the barrier, or how many times
                          two roles that share it reach it, is not decided by the model:
                          the check is not discharged

Which warpgroups reach an op is read off the protocol model (argus.verify.protocol.model):
its role, the branch conditions and loop bounds around it as z3 terms, with each
warpgroup_index() of the role replaced by the warpgroup's index in turn. Conditions over
sizes, block ids and loop counters are the same in every thread of the block (uniform);
the solver looks for one assignment of those where the count is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import z3

from argus.ir.nodes import Kernel
from argus.limits import WARPGROUP_THREADS
from argus.verify import lapped
from argus.verify.finding import Finding
from argus.verify.protocol import smt
from argus.verify.protocol.model import Event, Model, RoleInfo, build
from argus.verify.protocol.report import counterexample, finding
from argus.verify.protocol.smt import SolverUnknown

SYNCS = ("barrier.block", "barrier.named", "barrier.cluster")
UNKNOWN_COND = "cond@"       # the model's name for a branch condition it cannot express


@dataclass(frozen=True)
class Sync:
    event: Event
    key: tuple               # ("bar", id) or ("cluster",): what counts arrivals together
    count: int               # threads the barrier waits for
    members: tuple[int, ...]  # warpgroups of the role it is in (all of the block outside)

    @property
    def role(self) -> Optional[RoleInfo]:
        return self.event.where.role

    @property
    def call(self) -> str:
        op = self.event.op
        if op.opcode == "barrier.named":
            return f"named_barrier({op.attrs['id']}, {op.attrs['threads']})"
        return "sync_block()" if op.opcode == "barrier.block" else "cluster_sync()"

    @property
    def instruction(self) -> str:
        if self.key[0] == "cluster":
            return "barrier.cluster"
        return f"bar.sync {self.key[1]}"


def check(kernel: Kernel) -> list[Finding]:
    return check_model(build(kernel))


def check_model(m: Model) -> list[Finding]:
    block = m.kernel.launch.block
    everyone = tuple(range(block // WARPGROUP_THREADS))
    syncs = [_sync(e, block, everyone) for e in m.opcode(*SYNCS)]
    wg_vars = _warpgroup_vars(m)
    out: list[Finding] = []
    for s in syncs:
        if s.event.where.elect is not None:
            out.append(_elected(s))
            continue
        try:
            out += _participation(m, s, syncs, wg_vars, everyone)
        except SolverUnknown as err:
            out.append(finding("barriers.undecided", s.event.op,
                               f"the solver gave up deciding which threads reach this "
                               f"{s.call} ({err}); it is not checked",
                               "simplify the conditions around the barrier",
                               severity="warning"))
    return out + lapped.check_model(m)


def _sync(e: Event, block: int, everyone: tuple[int, ...]) -> Sync:
    op = e.op
    if op.opcode == "barrier.named":
        key, count = ("bar", int(op.attrs["id"])), int(op.attrs["threads"])
    elif op.opcode == "barrier.block":
        key, count = ("bar", 0), block
    else:
        key, count = ("cluster",), block
    members = tuple(e.where.role.warpgroups) if e.where.role else everyone
    return Sync(e, key, count, members)


def _warpgroup_vars(m: Model) -> dict:
    """role (or None) -> the z3 variables of its warpgroup_index() calls."""
    out: dict = {}
    for e in m.opcode("warpgroup_index"):
        v = m.terms.env.get(e.op.result)
        if v is not None and z3.is_expr(v):
            out.setdefault(id(e.where.role), []).append(v)
    return out


def _reach(m: Model, s: Sync, wg_vars: dict) -> list:
    """Per warpgroup of the role (by index in it): the condition under which it reaches
    the op, over uniform terms only."""
    where = s.event.where
    conds = [smt.bool_of(c) for c in where.conds]
    conds += [smt.lt(l.counter, l.trip) for l in where.loops if not isinstance(l.trip, int)]
    conds = [c for c in conds if not isinstance(c, bool)] + \
        ([z3.BoolVal(False)] if any(c is False for c in conds) else [])
    here = z3.And(*conds) if conds else z3.BoolVal(True)
    vars_ = wg_vars.get(id(where.role), [])
    return [z3.substitute(here, *[(v, smt.as_term(i)) for v in vars_]) if vars_ else here
            for i in range(len(s.members))]


def _participation(m: Model, s: Sync, syncs: list[Sync], wg_vars: dict,
                   everyone: tuple[int, ...]) -> list[Finding]:
    reach = _reach(m, s, wg_vars)
    if any(_has_unknown(r) for r in reach) and _depends_on_warpgroup(s, wg_vars):
        return [finding("barriers.undecided", s.event.op,
                        f"a branch around this {s.call} is not expressible in the model; "
                        "which warpgroups reach it is not decided", "branch on sizes, ids, "
                        "loop counters and warpgroup_index() arithmetic", severity="warning")]
    partners, clash = _partners(s, syncs)
    halves = _other_points(s, syncs)
    if clash is not None:
        return [finding(
            "barriers.count", s.event.op,
            f"{s.instruction} is used with {s.count} threads here and with {clash.count} "
            f"by role {clash.role.name if clash.role else '(all)'} at line "
            f"{clash.event.op.loc.line}: arrivals on one id count together, so the two "
            "counts cannot both be met", "give each group of threads its own barrier id, "
            "or the same count everywhere")]
    others = sum(WARPGROUP_THREADS * len(p.members) for p in _one_per_role(partners))
    undecided = [p for p in partners if p.event.where.signature != s.event.where.signature]
    if undecided:
        p = undecided[0]
        return [finding(
            "barriers.undecided", s.event.op,
            f"{s.instruction} is shared with role {p.role.name} (line "
            f"{p.event.op.loc.line}) inside different loops; that both reach it the same "
            "number of times is not decided", "reach the shared barrier at the same loop "
            "depth in both roles, or give each role its own id", severity="warning")]
    # the same role's syncs on this barrier at other points of the same loop body (one
    # warpgroup syncs before an op, another after it: a ping-pong): each warpgroup arrives
    # at one of the points per iteration, so their arrivals add up, and a warpgroup that
    # reaches two of them arrives twice in one phase
    # (only where some warpgroup of the role skips this point: where all reach it, each
    # point is a phase of its own, as in an epilogue that syncs twice)
    reaches = [reach] + [_reach(m, p, wg_vars) for p in halves]
    here_only = _arrivals(reach)
    with_halves = z3.Sum(here_only, *[_arrivals(rs) for rs in reaches[1:]])
    twice = [z3.And(reach[i], rs[i]) for rs in reaches[1:] for i in range(len(s.members))]
    partial = z3.Or(*[z3.Not(r) for r in reach]) if halves else z3.BoolVal(False)
    runs = z3.Or(*reach)
    wrong = z3.And(runs, z3.If(partial, z3.Or(with_halves + others != s.count, *twice),
                               here_only + others != s.count))
    if z3.is_false(z3.simplify(wrong)):
        return []
    smallest = [l.counter for l in s.event.where.loops] + \
        [m.terms.env[sym] for sym in m.kernel.symbols]
    found = smt.find(m.constraints, wrong, smallest, prefer=m.first_iteration(s.event.where))
    if found is None:
        return []
    here = [wg for wg, r in zip(s.members, reach)
            if z3.is_true(found.eval(r, model_completion=True))]
    also = []
    if z3.is_true(found.eval(partial, model_completion=True)):
        also = [wg for p, rs in zip(halves, reaches[1:]) for wg, r in zip(p.members, rs)
                if z3.is_true(found.eval(r, model_completion=True))]
    return [_report(m, s, found, here, partners, everyone, also)]


def _partners(s: Sync, syncs: list[Sync]):
    """The syncs of *other* roles on the same barrier (they arrive together with this one):
    those with the same count, and the first with a different one (a clash)."""
    same, clash = [], None
    for p in syncs:
        if p is s or p.key != s.key or p.event.where.elect is not None:
            continue
        if p.role is s.role or set(p.members) & set(s.members):
            continue
        if p.count == s.count:
            same.append(p)
        elif clash is None:
            clash = p
    return same, clash


def _arrivals(reach: list):
    """The threads that arrive, 128 for each warpgroup whose condition in `reach` holds."""
    return z3.Sum(*[z3.If(r, z3.BitVecVal(WARPGROUP_THREADS, smt.WIDTH),
                          z3.BitVecVal(0, smt.WIDTH)) for r in reach])


def _other_points(s: Sync, syncs: list[Sync]) -> list[Sync]:
    """The syncs of s's own role on the same barrier and count at other points of the same
    loop nest (a branch on the warpgroup puts each warpgroup at one of them)."""
    return [p for p in syncs if p is not s and p.role is s.role and p.key == s.key
            and p.count == s.count and p.event.where.elect is None
            and p.event.where.signature == s.event.where.signature]


def _one_per_role(partners: list[Sync]) -> list[Sync]:
    seen, out = set(), []
    for p in partners:
        if id(p.role) not in seen:
            seen.add(id(p.role))
            out.append(p)
    return out


def _report(m: Model, s: Sync, found, here: list[int], partners: list[Sync],
            everyone: tuple[int, ...], also: list[int] = ()) -> Finding:
    """`also`: the warpgroups of s's role that reach its other points in the loop body."""
    roles = _role_names(m)
    joined = sorted(set(here) | set(also) |
                    {w for p in _one_per_role(partners) for w in p.members})
    absent = [w for w in everyone if w not in joined]
    threads = WARPGROUP_THREADS * (len(here) + len(also) + sum(
        len(p.members) for p in _one_per_role(partners)))
    reached = "; ".join(_group(roles, joined)) or "no warpgroup"
    missing = "; ".join(_group(roles, absent)) or "none"
    if s.key[0] == "cluster" or s.event.op.opcode == "barrier.block":
        check = "barriers.participation"
        message = (f"{s.call} waits for all {s.count} threads of the block, but it is "
                   f"reached only by {reached} ({threads} threads), not by {missing}: "
                   f"the {s.instruction} never completes (deadlock)")
        hint = ("call it where every warpgroup runs (outside the role and its branches), "
                f"or sync only these warpgroups with named_barrier(id, {threads}), id 1..11")
    else:
        check = "barriers.count"
        left_out = [w for w in s.members if w not in here and w not in also]
        missing = f", not by {'; '.join(_group(roles, left_out))}" if left_out else ""
        doubled = sorted(set(here) & set(also))
        if doubled:
            effect = (f"warpgroup {doubled[0]} reaches it and another of its points in one "
                      "iteration, so it arrives twice in one phase")
        elif threads < s.count:
            effect = (f"the arrivals never reach {s.count} (deadlock)")
        else:
            effect = (f"the barrier releases after {s.count} of them and the rest arrive in "
                      "its next phase, mixing two syncs")
        message = (f"{s.call} waits for {s.count} threads, but it is reached by {reached} "
                   f"({threads} threads){missing}: {effect}")
        hint = f"count the threads that reach it: named_barrier({s.key[1]}, {threads})"
        if left_out:
            hint = (f"call it outside the branch on the warpgroup, so that every warpgroup "
                    f"of role {s.role.name if s.role else '(all)'} reaches it, or {hint}")
    cex = counterexample(m, found, s.event.where)
    if here and cex.warpgroup not in here:
        cex = _at_warpgroup(cex, here[0])
    return finding(check, s.event.op, message, hint, cex)


def _at_warpgroup(cex, wg: int):
    return replace(cex, warpgroup=wg, thread=wg * WARPGROUP_THREADS, warp=wg * 4, lane=0)


def _group(roles: dict[int, str], wgs: list[int]) -> list[str]:
    """'warpgroups 1, 2 of role consumer' per role, in warpgroup order."""
    by_role: dict[str, list[int]] = {}
    for w in wgs:
        by_role.setdefault(roles.get(w, ""), []).append(w)
    out = []
    for name, ws in by_role.items():
        listed = ", ".join(map(str, ws))
        noun = "warpgroup" if len(ws) == 1 else "warpgroups"
        out.append(f"{noun} {listed} of role {name}" if name else f"{noun} {listed} (no role)")
    return out


def _role_names(m: Model) -> dict[int, str]:
    names: dict[int, str] = {}
    for r in m.roles:
        for w in r.warpgroups:
            names.setdefault(w, r.name)
    return names


def _elected(s: Sync) -> Finding:
    scope = s.event.where.elect
    who = {"warp": "one thread of each warp", "block": "one thread of the block"}.get(
        scope, "one thread of each warpgroup")
    return finding(
        "barriers.elected", s.event.op,
        f"{s.call} inside elect_one({scope!r}) is reached by {who}; {s.instruction} is "
        f"executed by whole warps and waits for {s.count} threads, so it never completes",
        "move the barrier out of the elect_one() block (every thread of the warps "
        "must reach it)")


def _has_unknown(term) -> bool:
    seen, todo = set(), [term]
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and t.decl().name().startswith(UNKNOWN_COND):
            return True
        todo.extend(t.children())
    return False


def _depends_on_warpgroup(s: Sync, wg_vars: dict) -> bool:
    """Could an unexpressed branch depend on the warpgroup? Only where the role has more
    than one warpgroup and calls warpgroup_index() (the one thread-dependent scalar)."""
    return len(s.members) > 1 and bool(wg_vars.get(id(s.role)))
