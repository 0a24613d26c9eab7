"""Fences and block-wide barriers."""

from __future__ import annotations

from .structure import single_block_cluster


def _fence_proxy_async(agent, op, args):
    yield agent.machine.fence_proxy_async()


def _fence_mbarrier_init(agent, op, args):
    return  # one block per machine: init is visible to the block once executed
    yield


def _barrier_block(agent, op, args):
    yield agent.machine.bar_sync(0, agent.block.threads)


def _barrier_named(agent, op, args):
    yield agent.machine.bar_sync(int(op.attrs["id"]), int(op.attrs["threads"]))


def _barrier_cluster(agent, op, args):
    single_block_cluster(agent, op)  # a cluster of one block: a block-wide barrier
    yield agent.machine.bar_sync(0, agent.block.threads)


RULES = {"barrier.cluster": _barrier_cluster, "fence.proxy_async": _fence_proxy_async, "fence.mbarrier_init": _fence_mbarrier_init,
         "barrier.block": _barrier_block, "barrier.named": _barrier_named}
