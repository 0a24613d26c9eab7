"""wgmma and its fence/commit/wait: acc[m, n] += sum_k a[m, k] * b[n, k] (B is N x K
in shared memory, so the machine takes it transposed)."""

from __future__ import annotations

import numpy as np

from ..machine import RegisterFragment


def _fence(agent, op, args):
    yield agent.machine.wgmma_fence()


def _mma(agent, op, args):
    acc, a, b = (op.arg(n, args) for n in ("acc", "a", "b"))
    if isinstance(a, np.ndarray):
        # a register A operand computed by ordinary code before this op's wgmma.fence
        frag = RegisterFragment(f"{agent.name}.{op.arg('a')}", a)
        frag.owner, frag.needs_fence = agent.name, False
        a = frag
    trans_b = op.attrs.get("b_major", "k") == "k"
    yield agent.machine.wgmma(acc, a, b, trans_b=trans_b)


def _commit(agent, op, args):
    yield agent.machine.wgmma_commit()


def _wait(agent, op, args):
    yield agent.machine.wgmma_wait(int(op.attrs.get("pending", 0)))


RULES = {"wgmma.fence": _fence, "wgmma.mma": _mma, "wgmma.commit": _commit,
         "wgmma.wait": _wait}
