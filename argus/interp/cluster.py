"""Thread-block clusters: which blocks form a cluster, and how one CTA reaches its peers.

The blocks of one cluster run on one `Machine` (one scheduler, one shared-memory array
holding every CTA's buffers side by side, one cluster barrier); each block keeps its own
buffers and mbarriers. A remote arrive (`arrive(bar, cta=r)`) and a TMA multicast
(`tma_load(..., multicast=mask)`) name the peer's copy of the same allocation: same
buffer, stage and rows, same barrier index, in CTA r, as the hardware addresses a peer's
shared memory at the same CTA-relative offset.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InterpretError
from .machine import Machine, Region
from .machine.barriers import ClusterBarrier


def _dims(t, n: int = 3) -> tuple[int, ...]:
    t = tuple(int(x) for x in t)
    return t + (1,) * (n - len(t))


def cluster_of(block: int, grid, cluster) -> tuple[tuple[int, ...], int]:
    """(cluster coordinates, rank in the cluster) of a linear block index (x fastest)."""
    g, c = _dims(grid), _dims(cluster)
    coords, rest = [], block
    for extent in g:
        coords.append(rest % extent)
        rest //= extent
    home = tuple(x // k for x, k in zip(coords, c))
    local = [x % k for x, k in zip(coords, c)]
    return home, local[0] + c[0] * (local[1] + c[1] * local[2])


def cluster_index(block: int, grid, cluster) -> tuple[int, int]:
    """(linear index of the block's cluster in the grid of clusters, x fastest; number of
    clusters): what a schedule(..., by="cluster") walks with."""
    g, c = _dims(grid), _dims(cluster)
    home, _ = cluster_of(block, grid, cluster)
    counts = [ge // ce for ge, ce in zip(g, c)]
    return home[0] + counts[0] * (home[1] + counts[1] * home[2]), int(np.prod(counts))


def check_cluster(grid, cluster) -> int:
    """The number of blocks per cluster; the grid must be a whole number of clusters."""
    g, c = _dims(grid), _dims(cluster)
    for axis, (ge, ce) in enumerate(zip(g, c)):
        if ge % ce:
            raise InterpretError(f"grid {tuple(grid)} is not a whole number of clusters "
                                 f"{tuple(cluster)} along axis {'xyz'[axis]}; make the grid "
                                 f"a multiple of the cluster shape")
    return int(np.prod(c))


def group_blocks(indices, grid, cluster) -> list[list[int]]:
    """The clusters that contain `indices`, each as its blocks in rank order."""
    total = int(np.prod(_dims(grid)))
    members: dict[tuple, dict[int, int]] = {}
    for b in range(total):
        home, rank = cluster_of(b, grid, cluster)
        members.setdefault(home, {})[rank] = b
    wanted: list[tuple] = []
    for b in indices:
        home, _ = cluster_of(b, grid, cluster)
        if home not in wanted:
            wanted.append(home)
    return [[m[r] for r in sorted(m)] for m in (members[h] for h in wanted)]


@dataclass
class ClusterState:
    """What the CTAs of one cluster share; `blocks[rank]` is each CTA's BlockState."""

    machine: Machine
    size: int
    blocks: dict[int, Any] = field(default_factory=dict)
    barrier: ClusterBarrier | None = None
    homes: dict[int, tuple[int, int | None]] = field(default_factory=dict)  # id -> (op, i)

    def remember(self, obj, op_id: int, index: int | None = None) -> None:
        self.homes[id(obj)] = (op_id, index)

    def _rank(self, op, rank) -> int:
        rank = int(rank)
        if not 0 <= rank < self.size:
            raise InterpretError(f"{op.loc}: CTA {rank} is not in this cluster of {self.size} "
                                 f"blocks (ranks 0..{self.size - 1})")
        return rank

    def peer_barrier(self, op, bar, rank):
        op_id, index = self.homes[id(bar)]
        return self.blocks[self._rank(op, rank)].allocs[op_id][index]

    def peer_region(self, op, region: Region, rank) -> Region:
        op_id, _ = self.homes[id(region.buffer)]
        buffer = self.blocks[self._rank(op, rank)].allocs[op_id]
        peer = buffer.stage(region.stage) if region.stage is not None else buffer.whole()
        if region.first_row is not None:
            peer = peer.rows(region.first_row, region.first_row + region.shape[0])
        return peer

    def ranks_of(self, op, mask) -> list[int]:
        mask = int(mask)
        if mask <= 0 or mask >> self.size:
            raise InterpretError(f"{op.loc}: multicast mask {mask:#b} names CTAs outside this "
                                 f"cluster of {self.size} blocks; use bits 0..{self.size - 1}")
        return [r for r in range(self.size) if mask >> r & 1]
