"""Program-order walks of one role's ops with a state (wgmma groups, fences, pending
stores): loops are walked twice so that loop-carried state (a wgmma still in flight at
the end of an iteration) meets the next iteration; the two branches of an `if` start
from the same state and are joined."""

from __future__ import annotations


from argus.ir.nodes import Block


def walk(block: Block, state, visit) -> None:
    """visit(op, state) for each op in order; state.join(other) merges branches."""
    for op in block.ops:
        if op.opcode in ("for", "schedule"):
            for _ in range(2):
                walk(op.regions[0], state, visit)
            continue
        if op.opcode == "if":
            branches = []
            for region in op.regions:
                s = state.copy()
                walk(region, s, visit)
                branches.append(s)
            if len(branches) == 1:
                state.join(branches[0])
            else:
                state.replace(branches[0])
                state.join(branches[1])
            continue
        visit(op, state)
        for region in op.regions:
            walk(region, state, visit)


def role_blocks(kernel):
    """(role op, its body) for every role; (None, the whole body) for a kernel without
    roles, where every warpgroup runs the same code."""
    roles = [(op, op.regions[0]) for op in kernel.body.ops if op.opcode == "role"]
    return roles or [(None, kernel.body)]
