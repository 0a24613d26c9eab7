"""Ordinary (generic-proxy) shared-memory writes against async-proxy readers, and
epilogue buffers against their bulk stores, per role in program order:
  - a TMA store or wgmma that reads bytes written by `store`/`stmatrix` needs a
    fence_proxy_async() after the write (protocol.proxy-fence);
  - a buffer read by an in-flight TMA store is not written again before
    tma_store_wait (protocol.store-reuse); a wait by some threads of the role (one elected
    thread) counts for all once a barrier of the role (named or block) follows it;
  - a buffer written with ordinary stores by one role and read by another needs a
    barrier (sync_block, named barrier, or an arrive the reader waits on) between them
    (protocol.smem-race).
"""

from __future__ import annotations

from argus.ir.types import SmemTileType

from .report import finding, first_run, surface
from .walk import role_blocks, walk

GENERIC_WRITES = {"store": 0, "stmatrix": 0}
ASYNC_READS = {"tma.store": (1,), "wgmma.mma": (1, 2)}
SYNC_READS = {"load": 0, "ldmatrix": 0}


def _buffer(v):
    t = getattr(v, "type", None)
    return t.buffer if isinstance(t, SmemTileType) else None


class _State:
    def __init__(self):
        self.dirty: dict[str, object] = {}     # buffer -> write op not yet fenced
        self.storing: dict[str, object] = {}   # buffer -> tma.store op not yet waited
        # buffers whose store some threads of the role have waited for (an elected thread
        # in a branch): a barrier of the role after that wait makes it hold for all
        self.waited_by_some: set[str] = set()

    def copy(self):
        s = _State()
        s.dirty, s.storing = dict(self.dirty), dict(self.storing)
        s.waited_by_some = set(self.waited_by_some)
        return s

    def replace(self, other):
        self.dirty, self.storing = other.dirty, other.storing
        self.waited_by_some = other.waited_by_some

    def join(self, other):
        self.dirty.update(other.dirty)
        self.storing.update(other.storing)
        self.waited_by_some |= other.waited_by_some


def check(m) -> list:
    out, seen = [], set()

    def report(key, f):
        if key not in seen:
            seen.add(key)
            out.append(f)

    def visit(op, s: _State):
        code = op.opcode
        if code == "fence.proxy_async":
            s.dirty.clear()
        elif code == "tma.store_wait":
            if int(op.attrs.get("pending", 0)) == 0:
                s.waited_by_some |= set(s.storing)
                s.storing.clear()
        elif code in ("barrier.named", "barrier.block"):
            # the waiting thread reaches the barrier only after its wait returned
            for buf in s.waited_by_some:
                s.storing.pop(buf, None)
            s.waited_by_some.clear()
        if code in ASYNC_READS:
            for i in ASYNC_READS[code]:
                buf = _buffer(op.operands[i]) if i < len(op.operands) else None
                if buf in s.dirty:
                    w = s.dirty[buf]
                    report(("fence", id(op)), finding(
                        "protocol.proxy-fence", op,
                        f"{surface(op)} reads {buf} through the async proxy, but the "
                        f"{surface(w)} at line {w.loc.line} wrote it with ordinary stores and "
                        "no fence_proxy_async() came between", "call fence_proxy_async() "
                        f"after the {surface(w)} and before the {surface(op)}", first_run(m, op)))
            if code == "tma.store":
                s.storing[_buffer(op.operands[1])] = op
        if code in GENERIC_WRITES:
            buf = _buffer(op.operands[GENERIC_WRITES[code]])
            if buf is not None:
                if buf in s.storing:
                    st = s.storing[buf]
                    report(("reuse", id(op)), finding(
                        "protocol.store-reuse", op,
                        f"this overwrites {buf} while the TMA store at line {st.loc.line} "
                        "may still be reading it", "call tma_store_commit() and "
                        "tma_store_wait(0) before writing the buffer again", first_run(m, op)))
                s.dirty[buf] = op

    for role_op, body in role_blocks(m.kernel):
        walk(body, _State(), visit)
    out += _cross_role(m)
    return out


SYNCS = ("barrier.block", "barrier.named", "barrier.cluster", "mbarrier.arrive",
         "mbarrier.expect_tx")


def _cross_role(m) -> list:
    """Generic writes in one role read (or written) by another with no barrier between."""
    out = []
    writes: dict[str, list] = {}
    reads: dict[str, list] = {}
    for e in m.events:
        if e.where.role is None:
            continue
        code = e.op.opcode
        if code in GENERIC_WRITES:
            b = _buffer(e.op.operands[GENERIC_WRITES[code]])
            if b:
                writes.setdefault(b, []).append(e)
        for i in ((SYNC_READS[code],) if code in SYNC_READS else ASYNC_READS.get(code, ())):
            b = _buffer(e.op.operands[i]) if i < len(e.op.operands) else None
            if b:
                reads.setdefault(b, []).append(e)
    for buf, ws in writes.items():
        for w in ws:
            for r in reads.get(buf, []) + ws:
                if r.where.role is w.where.role:
                    continue
                # a block/cluster barrier at the top level, between the roles, orders both
                synced_after = any(e.where.role in (w.where.role, None) and e.order > w.order
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
