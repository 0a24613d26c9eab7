"""TMA box copies between global tensors and shared memory, and their bulk groups."""

from __future__ import annotations

from ..errors import InterpretError


def _load(agent, op, args):
    dst, src, bar = args[:3]
    if len(args) > 3 and args[3] not in (None, 0):
        raise InterpretError(f"{op.loc}: TMA multicast to a cluster is not modelled")
    yield agent.machine.tma_load(src.tensor, src.origin, dst, bar)


def _store(agent, op, args):
    dst, src = args
    yield agent.machine.tma_store(src, dst.tensor, dst.origin)


def _commit(agent, op, args):
    yield agent.machine.bulk_commit()


def _wait(agent, op, args):
    yield agent.machine.bulk_wait(int(op.attrs.get("pending", 0)))


RULES = {"tma.load": _load, "tma.store": _store, "tma.store_commit": _commit,
         "tma.store_wait": _wait}
