"""mbarrier initialisation: every init is made visible (fence_mbarrier_init) and the block
(or cluster) synchronised before any thread uses a barrier; in a cluster whose blocks
signal each other's barriers, no block exits before its peers are done (cluster_sync at
the end). Checked on program order of the kernel's top level, where the inits live."""

from __future__ import annotations

from argus.verify.finding import Counterexample

from argus.ir.ops import OPS

from .model import Model
from .report import finding

# every op that waits on, arrives on or completes a barrier (the op table's effects)
USES = ("mbarrier.wait",) + tuple(s.opcode for s in OPS.values()
                                  if s.arrives == "bar" or s.completes == "mbarrier:bar")


def check(m: Model) -> list:
    inits = m.opcode("mbarrier.init")
    if not inits:
        return []
    out = []
    last_init = max(inits, key=lambda e: e.order)
    uses = [e for e in m.opcode(*USES)]
    first_use = min((e.order for e in uses), default=None)
    before = (lambda e: first_use is None or e.order < first_use)
    fences = [e for e in m.opcode("fence.mbarrier_init") if e.order > last_init.order
              and before(e)]
    sync_codes = ("barrier.cluster",) if m.cluster_size > 1 else ("barrier.block",
                                                                  "barrier.cluster")
    after = fences[0].order if fences else last_init.order
    syncs = [e for e in m.opcode(*sync_codes) if e.order > after and before(e)]
    use = min(uses, key=lambda e: e.order) if uses else None
    # the elected initialiser is thread 0 (warpgroup 0); a use by another warpgroup races
    others = [e for e in uses if e.where.role is not None and 0 not in e.where.role.warpgroups]
    cex = _first_use(m, min(others, key=lambda e: e.order) if others else use)
    if not fences:
        out.append(finding(
            "protocol.mbarrier-init-fence", last_init.op,
            "the mbarrier_init here is not followed by fence_mbarrier_init() before the "
            f"barriers are first used (line {use.op.loc.line})" if use else
            "the mbarrier_init here is not followed by fence_mbarrier_init()",
            "call fence_mbarrier_init() after the mbarrier_init loop, then sync_block()"
            + (" / cluster_sync()" if m.cluster_size > 1 else ""), cex))
    if not syncs and (last_init.where.elect is not None or m.cluster_size > 1):
        what = "cluster_sync()" if m.cluster_size > 1 else "sync_block()"
        anchor = fences[0].op if fences else last_init.op
        out.append(finding(
            "protocol.mbarrier-init-sync", anchor,
            f"the barriers are initialised by one thread but no {what} follows before "
            f"their first use (line {use.op.loc.line if use else '?'}): other warpgroups "
            "may wait on or arrive at an uninitialised mbarrier",
            f"call {what} after fence_mbarrier_init() and before the roles start", cex))
    remote = [e for e in m.opcode("mbarrier.arrive") if e.op.arg("cta") is not None] + \
        [e for e in m.opcode("tma.load") if e.op.arg("multicast") is not None]
    if m.cluster_size > 1 and remote:
        last = max(m.events, key=lambda e: e.order)
        exit_syncs = [e for e in m.opcode("barrier.cluster")
                      if e.order > max(x.order for x in remote)]
        if not exit_syncs:
            late = max(remote, key=lambda e: e.order)      # the last signal to a peer
            out.append(finding(
                "protocol.cluster-exit-sync", late.op,
                "blocks of the cluster signal each other's barriers (remote arrive or TMA "
                "multicast) but no cluster_sync() follows: a block may exit while a peer "
                "still writes its shared memory", "end the kernel with cluster_sync()",
                _first_use(m, late)))
    return out


def _first_use(m: Model, use):
    """The barrier and warpgroup of the first use, at the first iteration."""
    if use is None:
        return None
    from .ring import bar_operand
    ref = m.bars.get(bar_operand(use))
    idx = ref.index if ref is not None and isinstance(ref.index, int) else 0
    wg = use.where.role.warpgroups[0] if use.where.role else 0
    return Counterexample(warpgroup=wg, thread=wg * 128, warp=wg * 4, lane=0,
                          iteration={l.name: 0 for l in use.where.loops},
                          barrier=f"{ref.array.name}[{idx}]" if ref is not None else None)
