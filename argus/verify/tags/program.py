"""Where an op sits in the kernel: its position in program order and the `elect_one` scope
around it. The walker visits each role once per warpgroup, so walk order is not program
order; the shared-memory checks need the latter (a TMA store reads what the stores before
it in the same loop body wrote) and the issuing threads of a TMA store (one elected
thread, or every thread of its warpgroup)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from argus.ir.nodes import Block, Kernel

THREADS_PER = {"warpgroup": 1, "warp": 4, "block": 1, None: 128}   # issuers per warpgroup


@dataclass(frozen=True)
class Place:
    order: int                 # pre-order index of the op in the kernel
    elect: Optional[str]       # scope of the innermost elect_one around it, or None
    path: tuple                # (block, index of the op or its ancestor in it), from the top


def places(kernel: Kernel) -> dict[int, Place]:
    out: dict[int, Place] = {}

    def visit(block: Block, elect, path) -> None:
        for i, op in enumerate(block.ops):
            here = (*path, (block, i))
            out[id(op)] = Place(len(out), elect, here)
            inner = op.attrs.get("scope", "warpgroup") if op.opcode == "elect_one" else elect
            for region in op.regions:
                visit(region, inner, here)

    visit(kernel.body, None, ())
    return out


def place(w, op) -> Place:
    """The op's place (computed once per walker)."""
    table = getattr(w, "_places", None)
    if table is None:
        table = w._places = places(w.kernel)
    return table[id(op)]


def issuers(w, op) -> int:
    """How many threads of its warpgroup issue this op: 1 inside elect_one (4 for
    elect_one("warp")), else all 128."""
    return THREADS_PER[place(w, op).elect]


BARRIERS = ("barrier.block", "barrier.named")


def barrier_between(w, first, second, threads: int):
    """A barrier of at least `threads` threads that every thread passing `first` then
    `second` (two ops of one loop body) passes in between: an op of the innermost block
    holding both, strictly between them, not inside a branch. The barrier op, or None."""
    a, b = place(w, first).path, place(w, second).path
    common = 0
    while common < min(len(a), len(b)) and a[common][0] is b[common][0] and \
            a[common][1] == b[common][1]:
        common += 1
    if common >= min(len(a), len(b)) or a[common][0] is not b[common][0]:
        return None
    block, lo, hi = a[common][0], a[common][1], b[common][1]
    for op in block.ops[lo + 1:hi]:
        if op.opcode == "barrier.block" or (
                op.opcode == "barrier.named" and op.attrs.get("threads", 0) >= threads):
            return op
    return None
