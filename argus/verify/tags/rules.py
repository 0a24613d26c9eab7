"""Which transfer rule handles which opcode (structure and scalars are in walker.py)."""

from . import asserts, attention, memory, reduction, routing_rules, store, tma, tma_store, wgmma

RULES = {
    "tile": memory.tile,
    "smem.alloc": memory.smem_alloc,
    "smem.stage": memory.smem_stage,
    "smem.tile": memory.smem_tile,
    "frag.alloc": memory.frag_alloc,
    "frag.assign": memory.frag_assign,
    "frag.slice": memory.frag_slice,
    "load": memory.load,
    "math.cast": memory.cast,
    "tag.add": memory.tag_add,
    "tma.load": tma.tma_load,
    "tma.store": tma_store.tma_store,
    "atomic.add": reduction.atomic_add,
    "wgmma.mma": wgmma.mma,
    "store": store.store,
    "tag.assert": asserts.tag_assert,
}
for _name in ("add", "sub", "mul", "div", "max", "min", "exp2", "neg", "select"):
    RULES[f"math.{_name}"] = memory.elementwise
RULES.update(attention.RULES)                  # flash attention (attention.py)
RULES["store"] = attention.guard_store(RULES["store"])
routing_rules.register(RULES)     # MoE (last: it wraps some of the rules above)
