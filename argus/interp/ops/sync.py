"""Fences and block-wide barriers."""

from __future__ import annotations



def _fence_proxy_async(agent, op, args):
    yield agent.machine.fence_proxy_async()


def _fence_mbarrier_init(agent, op, args):
    return  # an init is visible to the whole cluster once executed (the machine is shared)
    yield


def _barrier_block(agent, op, args):
    yield agent.machine.bar_sync(0, agent.block.threads, agent.block.prefix)


def _barrier_named(agent, op, args):
    yield agent.machine.bar_sync(int(op.attrs["id"]), int(op.attrs["threads"]),
                                 agent.block.prefix)


def _barrier_cluster(agent, op, args):
    # barrier.cluster.arrive + wait: every warpgroup of every CTA of the cluster
    barrier = agent.block.cluster.barrier
    yield agent.machine.cluster_arrive(barrier)
    yield agent.machine.cluster_wait(barrier)


RULES = {"barrier.cluster": _barrier_cluster, "fence.proxy_async": _fence_proxy_async, "fence.mbarrier_init": _fence_mbarrier_init,
         "barrier.block": _barrier_block, "barrier.named": _barrier_named}
