"""Which transfer rule handles which opcode: the idiom packs (packs.py) in their stated
order (structure and scalars are in walker.py)."""

from . import (asserts, attention, countsort_pack, heads, memory, ranked_pack, reduction, routing_rules, store, tma,
               tma_store, wgmma)
from .packs import IdiomPack, compose

# The generic transfers: one rule per op of the op table that moves tagged data (every
# elementwise math op of the table through memory.elementwise)
CORE = IdiomPack(
    "core",
    "tiles, shared and register fragments, loads, TMA, wgmma, stores, atomics, casts, "
    "elementwise math, tag_assert",
    rules={"tile": memory.tile,
           "smem.alloc": memory.smem_alloc,
           "smem.stage": memory.smem_stage,
           "smem.tile": memory.smem_tile,
           "frag.alloc": memory.frag_alloc,
           "frag.assign": memory.frag_assign,
           "frag.slice": memory.frag_slice,
           "load": memory.load,
           "math.cast": memory.cast,
           "math.cmp": memory.elementwise,
           "tag.add": memory.tag_add,
           "tma.load": tma.tma_load,
           "tma.store": tma_store.tma_store,
           "atomic.add": reduction.atomic_add,
           "wgmma.mma": wgmma.mma,
           "store": store.store,
           "tag.assert": asserts.tag_assert,
           "tag.heads": heads.declare,
           **{opcode: memory.elementwise for opcode in memory.ELEMENTWISE}})

# The order: the generic transfers, then the softmax idioms (which refine the elementwise
# math, assignments and stores), then MoE routing (which refines the elementwise math,
# coordinates, row reductions, loads and stores, passing what is not a routing vector on),
# then the iterated arg-max (top-k) selection (which gives the results of the ops before it
# a selection meaning and proves stores of them), then the counting sort (count meanings of
# 1-D vectors and the contract of scatters to rank slots).
# An op reaches the last pack's rule first; `COMPOSED.chain(opcode)` lists the fallbacks.
PACKS = (CORE, attention.PACK, routing_rules.PACK, ranked_pack.PACK, countsort_pack.PACK)
COMPOSED = compose(PACKS)
RULES = COMPOSED.rules

# Ops that move no tagged data: the protocol pass (argus/verify/protocol) checks them
NO_TAGGED_DATA = frozenset({
    "mbarrier.init", "mbarrier.arrive", "mbarrier.expect_tx", "tma.store_commit",
    "tma.store_wait", "wgmma.fence", "wgmma.commit", "wgmma.wait", "fence.proxy_async",
    "fence.mbarrier_init", "barrier.block", "barrier.named", "barrier.cluster"})
# Ops the tag pass does not model yet, and why (`argus check` reports them as not modelled)
NOT_MODELLED = {
    "ldmatrix": "a shared-memory read into registers: the tag pass keeps the tags of what "
                "TMA writes to a stage for wgmma's descriptors, not per-thread reads",
    "stmatrix": "a register write into shared memory read back by ldmatrix or TMA: the tag "
                "pass has no per-thread shared-memory writes besides store()",
}
