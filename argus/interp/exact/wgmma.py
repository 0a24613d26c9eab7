"""Exact-mode wgmma: the accumulator's registers are updated element by element through the
accumulator layout; a register A operand is read through its wgmma_a_rs layout (so P
handed over in the wrong registers gives a wrong product); shared-memory operands are read
by the machine through their descriptors (smem_image.operand_addresses)."""

from __future__ import annotations

from ..machine import RegisterFragment
from .regs import Regs


def _mma(agent, op, args):
    acc, a, b = (op.arg(n, args) for n in ("acc", "a", "b"))
    if isinstance(a, Regs):
        frag = RegisterFragment(f"{agent.name}.{op.arg('a')}", a.data, layout=a.layout)
        frag.owner, frag.needs_fence = agent.name, False
        a = frag
    trans_b = op.attrs.get("b_major", "k") == "k"
    yield agent.machine.wgmma(acc, a, b, trans_b=trans_b)


RULES = {"wgmma.mma": _mma}
