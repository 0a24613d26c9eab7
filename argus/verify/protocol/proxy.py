"""Ordinary (generic-proxy) shared-memory writes against async-proxy readers, and
epilogue buffers against their bulk stores, per role in program order:
  - a TMA store or wgmma that reads bytes written by `store`/`stmatrix` needs a
    fence_proxy_async() after the write (protocol.proxy-fence);
  - a buffer read by an in-flight TMA store is not written again before
    tma_store_wait (protocol.store-reuse); a wait by some threads of the role (one elected
    thread) counts for all once a barrier of the role (named or block) follows it;
    tma_store_wait(N) leaves the thread's N newest committed groups in flight (a double
    buffer: wait(1) frees the buffer of the store before the last);
  - bulk-store groups belong to the thread that committed them: tma_store_wait retires
    only the stores of the threads that execute it (its branch conditions hold wherever
    the store's do, and its election covers the store's), and every TMA store is retired
    by its issuing thread before the role ends (protocol.store-unretired: a block that
    exits with a store still reading its shared memory);
  - a buffer written with ordinary stores by one role and read by another needs a
    barrier (sync_block, named barrier, or an arrive the reader waits on) between them
    (protocol.smem-race);
  - a buffer a warpgroup gathers with cp.async (generic-proxy writes that land after the
    writer has moved on, so only the reader can fence them) and another role reads through
    the async proxy (wgmma) needs a fence_proxy_async() in the reader between its barrier
    wait and the read (protocol.proxy-fence).
"""

from __future__ import annotations

import z3

from argus.ir.ops import OPS
from argus.ir.types import SmemTileType

from . import smt
from .report import counterexample, finding, first_run, surface
from .walk import role_blocks, walk

# What ops read and write, by operand name, from the op table. Only shared-memory tiles
# count here (_buffer is None for the rest): the ordinary (generic-proxy) writes are
# store's and stmatrix's dst; the async-proxy reads tma.store's src and wgmma's a and b;
# the ordinary reads load's and ldmatrix's src.
GENERIC_WRITES = {s.opcode: s.writes for s in OPS.values() if s.writes and s.proxy == "generic"}
ASYNC_READS = {s.opcode: s.reads for s in OPS.values() if s.reads and s.proxy == "async"}
READS = {s.opcode: s.reads for s in OPS.values() if s.reads}


def _buffer(v):
    t = getattr(v, "type", None)
    return t.buffer if isinstance(t, SmemTileType) else None


class _State:
    def __init__(self):
        self.dirty: dict[str, object] = {}     # buffer -> write op not yet fenced
        self.storing: dict[str, object] = {}   # buffer -> tma.store op not yet waited (oldest first)
        self.group: dict[str, int | None] = {}  # buffer -> its store's bulk group (None: not
                                                # committed yet); groups count up in commit order
        self.groups = 0
        # buffers whose store some threads of the role have waited for (an elected thread
        # in a branch): a barrier of the role after that wait makes it hold for all
        self.waited_by_some: set[str] = set()

    def copy(self):
        s = _State()
        s.dirty, s.storing, s.group = dict(self.dirty), dict(self.storing), dict(self.group)
        s.groups = self.groups
        s.waited_by_some = set(self.waited_by_some)
        return s

    def replace(self, other):
        self.dirty, self.storing, self.group = other.dirty, other.storing, other.group
        self.groups = other.groups
        self.waited_by_some = other.waited_by_some

    def join(self, other):
        self.dirty.update(other.dirty)
        self.storing.update(other.storing)
        for buf, g in other.group.items():
            # pending on both paths: take the newer group (None, not committed, is newest),
            # so a wait(N) retires it only if it would on either path
            mine = self.group.get(buf, g)
            self.group[buf] = None if g is None or mine is None else max(g, mine)
        self.groups = max(self.groups, other.groups)
        self.waited_by_some |= other.waited_by_some


# which elections a wait's threads cover: a wait by every thread of the branch (None) or
# by one thread per warp covers a store by one thread per warpgroup (warp 0's leader)
_COVERS = {None: {None, "warp", "warpgroup", "block"}, "warp": {"warp", "warpgroup"},
           "warpgroup": {"warpgroup"}, "block": {"block"}}


def _retires(m, wait_where, store_where):
    """Does a tma_store_wait here run in the thread that issued the store? Its election
    covers the store's, and wherever the store's branch conditions hold so do its own.
    None when z3 cannot decide it."""
    if wait_where is None or store_where is None:
        return True        # no model of one of them: keep the old, per-role reading
    if store_where.elect not in _COVERS.get(wait_where.elect, ()):
        return False
    if not wait_where.conds:
        return True
    holds = [smt.bool_of(c) for c in store_where.conds]
    wait = [smt.bool_of(c) for c in wait_where.conds]
    try:
        return smt.find([*m.constraints, *holds], z3.Not(z3.And(*wait))) is None
    except smt.SolverUnknown:
        return None


def check(m) -> list:
    out, seen = [], set()
    where_of = {id(e.op): e.where for e in m.events}

    def report(key, f):
        if key not in seen:
            seen.add(key)
            out.append(f)

    def visit(op, s: _State):
        code = op.opcode
        if code == "fence.proxy_async":
            s.dirty.clear()
        elif code == "tma.store_wait":
            mine = []
            for buf, st in s.storing.items():
                retires = _retires(m, where_of.get(id(op)), where_of.get(id(st)))
                if retires is None:      # taken as retired, and said so
                    report(("undecided", id(op), id(st)), finding(
                        "protocol.unmodelled", op,
                        f"z3 could not decide whether this wait runs in the thread that "
                        f"issued the TMA store at line {st.loc.line}; it is taken to "
                        "retire it, unchecked", "write the wait under the same condition "
                        "and elect_one() as the store", severity="warning"))
                if retires is not False:
                    mine.append(buf)
            pending = int(op.attrs.get("pending", 0))
            if pending:
                # the `pending` newest committed groups of the thread may still read; a
                # store not committed yet is not waited for at all
                newest = sorted({s.group[b] for b in mine if s.group.get(b) is not None})
                keep = set(newest[-pending:])
                mine = [b for b in mine if s.group.get(b) is not None and s.group[b] not in keep]
            s.waited_by_some |= set(mine)
            for buf in mine:
                del s.storing[buf]
                s.group.pop(buf, None)
        elif code == "tma.store_commit":
            if any(g is None for g in s.group.values()):
                for buf, g in s.group.items():
                    if g is None:
                        s.group[buf] = s.groups
                s.groups += 1
        elif code in ("barrier.named", "barrier.block"):
            # the waiting thread reaches the barrier only after its wait returned
            for buf in s.waited_by_some:
                s.storing.pop(buf, None)
                s.group.pop(buf, None)
            s.waited_by_some.clear()
        if code in ASYNC_READS:
            for name in ASYNC_READS[code]:
                buf = _buffer(op.arg(name))
                if buf in s.dirty:
                    w = s.dirty[buf]
                    report(("fence", id(op)), finding(
                        "protocol.proxy-fence", op,
                        f"{surface(op)} reads {buf} through the async proxy, but the "
                        f"{surface(w)} at line {w.loc.line} wrote it with ordinary stores and "
                        "no fence_proxy_async() came between", "call fence_proxy_async() "
                        f"after the {surface(w)} and before the {surface(op)}", first_run(m, op)))
            if code == "tma.store":
                buf = _buffer(op.arg("src"))
                s.storing.pop(buf, None)       # now the newest
                s.storing[buf] = op
                s.group[buf] = None
        for name in GENERIC_WRITES.get(code, ()):
            buf = _buffer(op.arg(name))
            if buf is not None:
                if buf in s.storing:
                    st = s.storing[buf]
                    report(("reuse", id(op)), finding(
                        "protocol.store-reuse", op,
                        f"this overwrites {buf} while the TMA store at line {st.loc.line} "
                        "may still be reading it", "call tma_store_commit() and "
                        "tma_store_wait(0) (in the thread that issued the store) before writing the "
                        "buffer again", first_run(m, op)))
                s.dirty[buf] = op

    for role_op, body in role_blocks(m.kernel):
        end = _State()
        walk(body, end, visit)
        for buf, st in end.storing.items():
            if buf in end.waited_by_some:
                continue       # its issuing thread waited; the others need not
            report(("unretired", id(st)), finding(
                "protocol.store-unretired", st,
                f"this TMA store from {buf} may still be in flight when the block exits: no "
                "tma_store_wait(0) run by the thread that issued it follows (bulk-store "
                "groups belong to the committing thread; a wait in another warpgroup or "
                "branch does not retire them)",
                "after the last store, call tma_store_wait(0) under the same condition and "
                "elect_one() as the tma_store", counterexample(m, None, where_of.get(id(st)))))
    out += _cross_role(m)
    out += _reader_fences(m)
    return out


SYNCS = ("barrier.block", "barrier.named", "barrier.cluster", "mbarrier.arrive",
         "mbarrier.expect_tx")
# writes that arrive on a barrier once they have landed (gather.cp_async): they order
# themselves before the barrier's waiters, no later arrive needed
SELF_SIGNALLED = {s.opcode for s in OPS.values() if s.arrives and s.writes}


def _cross_role(m) -> list:
    """Generic writes in one role read (or written) by another with no barrier between."""
    out = []
    writes: dict[str, list] = {}
    reads: dict[str, list] = {}
    for e in m.events:
        if e.where.role is None:
            continue
        code = e.op.opcode
        for name in GENERIC_WRITES.get(code, ()):
            b = _buffer(e.op.arg(name))
            if b:
                writes.setdefault(b, []).append(e)
        for name in READS.get(code, ()):
            b = _buffer(e.op.arg(name))
            if b:
                reads.setdefault(b, []).append(e)
    for buf, ws in writes.items():
        for w in ws:
            for r in reads.get(buf, []) + ws:
                if r.where.role is w.where.role:
                    continue
                # a block/cluster barrier at the top level, between the roles, orders both
                synced_after = w.op.opcode in SELF_SIGNALLED or any(
                    e.where.role in (w.where.role, None) and e.order > w.order
                    and e.op.opcode in SYNCS for e in m.events)
                synced_before = any(e.where.role in (r.where.role, None) and e.order < r.order
                                    and e.op.opcode in SYNCS + ("mbarrier.wait",)
                                    for e in m.events)
                if not (synced_after and synced_before):
                    out.append(finding(
                        "protocol.smem-race", r.op,
                        f"role {r.where.role.name} accesses {buf}, which role "
                        f"{w.where.role.name} writes at line {w.op.loc.line}, with no barrier "
                        "ordering the two", "order them: the writer arrives on an mbarrier "
                        "(or calls named_barrier) after the write, the reader waits before "
                        "the access", first_run(m, r.op)))
                    return out
    return out


def _reader_fences(m) -> list:
    """An async-proxy read, in another role, of a buffer a self-signalled copy (cp.async)
    writes: the reader fences after its last wait before the read."""
    out = []
    for w in m.events:
        if w.op.opcode not in SELF_SIGNALLED:
            continue
        buf = _buffer(w.op.arg(GENERIC_WRITES[w.op.opcode][0]))
        for r in m.events:
            if r.op.opcode not in ASYNC_READS or r.where.role is w.where.role:
                continue
            if buf not in {_buffer(r.op.arg(n)) for n in ASYNC_READS[r.op.opcode]}:
                continue
            mine = [e for e in m.events if e.where.role is r.where.role and e.order < r.order]
            waited = max((e.order for e in mine if e.op.opcode == "mbarrier.wait"), default=-1)
            if any(e.op.opcode == "fence.proxy_async" and e.order > waited for e in mine):
                continue
            out.append(finding(
                "protocol.proxy-fence", r.op,
                f"{surface(r.op)} reads {buf} through the async proxy, but {buf} is written by "
                f"the cp.async copies of the gather at line {w.op.loc.line} (generic proxy) and "
                "no fence_proxy_async() comes between the barrier wait and this read",
                f"call fence_proxy_async() after the wait that the gather's arrivals complete, "
                f"before the {surface(r.op)}", first_run(m, r.op)))
            return out
    return out
