"""One walk for all the warpgroups of a role: warpgroup_index() as a bounded variable.

A role of n warpgroups runs one body n times, each with its own `warpgroup_index()`. Every
claim the tag pass proves is a statement for every value of every variable, so a walk
with the index a variable `wg` (0 <= wg < n) proves each claim for all n warpgroups at once,
where n walks with the index a constant prove it n times (the library attention's causal
d = 128 check spent a third of its tag walk repeating warpgroup 0's queries for
warpgroup 1).

The variable lies in the role's scope, so it is part of every writer's identity: two
warpgroups that store one element are two writers that differ in `wg`, and the store
race check (writers.py) finds them exactly as it finds two iterations of a loop that
store one element (its minimiser pins the warpgroups first). The checks that need each
warpgroup's record by itself take the instances of the variable (`instances`,
`per_warpgroup`): coverage tries every value of it, as it does the cluster rank (two
writer variables of one coefficient, `bx + wg`, would hide a writer from its Euclidean
witness); the masked-loop check asks that a block be dead for every instance; a
shared-memory band chosen by it has its descriptor layout proved at each instance's row
(operands.py). A counterexample names the warpgroup the model gives `wg`
(report.counterexample, report.warpgroup_of), and the minimiser tries the smallest first
(report.KIND_ORDER), as the walks in increasing order did.

Not every record takes a symbolic warpgroup. TMA stores and the shared-memory stores
they read, atomic adds, and the register-to-shared copies are compared pairwise by their
warpgroup (tma_store.py, reduction.py); a barrier or a TMA load chosen by the index is not
modelled with it symbolic. A role that has any of them is walked once per warpgroup as
before: `walkable` says which.
"""

from __future__ import annotations

import z3

from argus.ir.nodes import Block, Value
from argus.ir.types import SmemBufferType, SmemTileType
from argus.verify.smt import bv, concrete, mentions, only

# records compared pairwise by warpgroup, or ops the tag pass does not model per thread
PAIRWISE = frozenset({"tma.store", "atomic.add", "ldmatrix", "stmatrix"})
# ops that take a warpgroup-dependent scalar and keep the claims symbolic in it
INDEX_USERS = frozenset({"tile", "smem.tile", "if", "for", "store", "load", "tag.assert",
                         "barrier.named", "elect_one"})


def walkable(region: Block) -> bool:
    """Whether one walk with the warpgroup index symbolic stands for the per-warpgroup
    walks of this role body: no pairwise records, and the index (and the scalars computed
    from it) reaching only global tiles, shared-memory bands, conditions, loop bounds,
    loads, stores to global memory, elementwise math and tag asserts."""
    return _walkable(region, set())


def _walkable(block: Block, derived: set) -> bool:
    for op in block.ops:
        if op.opcode in PAIRWISE:
            return False
        if op.opcode == "store" and _in_smem(op.arg("dst")):
            return False
        uses = any(isinstance(o, Value) and o in derived for o in op.operands)
        if op.opcode == "warpgroup_index" or (uses and op.opcode.startswith("arith.")):
            derived.update(op.results)
        elif uses and op.opcode not in INDEX_USERS and not op.opcode.startswith("math."):
            return False
        for region in op.regions:
            if not _walkable(region, derived):
                return False
    return True


def _in_smem(value) -> bool:
    return isinstance(getattr(value, "type", None), (SmemTileType, SmemBufferType))


def index_var(w, role: str, count: int) -> z3.BitVecRef:
    """The role's warpgroup index: a variable below `count`, enumerable like a short
    constant loop (a tag assumption inside the role is instantiated per warpgroup)."""
    term = w.ctx.var(f"{role}_wg", "warpgroup", upper=count)
    w.ctx.small[term.sexpr()] = count
    return term


def warpgroup(warpgroups: tuple[int, ...], index):
    """The absolute warpgroup of `index` (a constant or the role's index variable)."""
    if isinstance(index, int):
        return warpgroups[index]
    first = warpgroups[0]
    if warpgroups == tuple(range(first, first + len(warpgroups))):
        return index + first if first else index
    out = z3.BitVecVal(warpgroups[-1], index.size())
    for i in reversed(range(len(warpgroups) - 1)):
        out = z3.If(index == i, z3.BitVecVal(warpgroups[i], index.size()), out)
    return out


def instances(w, term) -> list[tuple[int | None, int]] | None:
    """The constant values of `term` (a shared-memory row, say): [(None, c)] for a
    constant; [(i, c_i) for each warpgroup index i] for a term of the role's index variable
    alone; None for anything else."""
    c = concrete(term)
    if c is not None:
        return [(None, c)]
    index = w.role.index if w.role is not None else None
    if not z3.is_expr(index) or not only(bv(term), {index.get_id()}):
        return None
    out = []
    for pairs in per_warpgroup(w, [term]):      # one (index, i) pair each
        c = concrete(z3.substitute(bv(term), *pairs))
        if c is None:
            return None
        out.append((pairs[0][1].as_long(), c))
    return out


def per_warpgroup(w, terms) -> list[list[tuple]]:
    """The substitutions that instantiate `terms` at each warpgroup: one list of
    (index variable, value) pairs per combination of the role index variables they
    mention ([[]] when they mention none). For the checks that need every warpgroup's
    record at once (mask.visited_blocks: a block fully masked for every warpgroup)."""
    ids = {}
    for v in w.ctx.vars.values():
        if v.kind == "warpgroup":
            ids[v.term.get_id()] = v.term
    if not ids:
        return [[]]
    used = [ids[i] for i in ids if any(mentions(bv(t) if not z3.is_bool(t) else t, {i})
                                       for t in terms)]
    out: list[list[tuple]] = [[]]
    for var in used:
        count = w.ctx.small[var.sexpr()]
        out = [[*pairs, (var, z3.BitVecVal(i, var.size()))] for pairs in out
               for i in range(count)]
    return out
