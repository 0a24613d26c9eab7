"""Asynchronous operations that land later, at a time the scheduler picks.

- TmaLoad: a box of a global tensor (out-of-bounds elements zero-filled) is written into
  a shared-memory region through the async proxy, then complete_tx(its bytes) on its
  mbarrier; one TMA instruction is issued as a few such pieces (bands of rows), so the
  full box bytes count once every piece has landed. Boxes are given in NumPy axis order
  (last axis fastest, = TMA dim 0).
- BulkStore (TMA store): a shared-memory region is read through the async proxy and
  written to a global box (out-of-bounds elements are dropped); retired by
  cp.async.bulk.commit_group / wait_group.
- Wgmma: acc(fp32) += A @ B with A from shared memory or registers and B from shared
  memory. Its reads of shared memory happen when it lands, anywhere between issue and
  the wgmma.wait_group that retires it, so overwriting a stage before that wait gives a
  wrong answer. The wgmmas of one agent land in issue order (the tensor core is in-order).

Groups (AsyncGroups) hold the commit_group / wait_group(N) bookkeeping of one agent for
one kind of operation: after wait_group(N) at most N committed groups are pending.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .clocks import ClockOwner
from .dtypes import ElementType, element_type
from .errors import AsyncOpError
from .mbarrier import Mbarrier
from .memory import Region, gather_codes, scatter_codes
from .registers import RegisterFragment
from .smem_image import operand_addresses, tma_image


class GlobalTensor:
    """A global-memory tensor: raw element codes plus their element type."""

    def __init__(self, name: str, codes: np.ndarray, dtype):
        self.name = name
        self.dtype: ElementType = element_type(dtype)
        self.codes = np.ascontiguousarray(codes, dtype=self.dtype.storage)

    @classmethod
    def from_values(cls, name: str, values, dtype) -> "GlobalTensor":
        dt = element_type(dtype)
        return cls(name, dt.encode(np.asarray(values, dtype=np.float32)), dt)

    @classmethod
    def zeros(cls, name: str, shape, dtype) -> "GlobalTensor":
        dt = element_type(dtype)
        return cls(name, np.zeros(shape, dtype=dt.storage), dt)

    def values(self) -> np.ndarray:
        return self.dtype.decode(self.codes)


def box_slices(shape, coords, box):
    """Per axis: the in-bounds part of the box, as (global slice, box slice)."""
    if len(coords) != len(shape) or len(box) != len(shape):
        raise AsyncOpError(
            f"box of rank {len(box)} at coordinates {tuple(coords)} does not match a tensor of "
            f"rank {len(shape)}; give one coordinate and one box extent per tensor axis")
    g, b = [], []
    for extent, start, size in zip(shape, coords, box):
        lo, hi = max(start, 0), min(start + size, extent)
        if hi <= lo:
            return None
        g.append(slice(lo, hi))
        b.append(slice(lo - start, hi - start))
    return tuple(g), tuple(b)


class PendingOp:
    """Base of everything that lands later. `owner` is its own clock (a virtual thread)."""

    kind = "async"

    def __init__(self, issuer: str, owner: ClockOwner):
        self.issuer = issuer
        self.owner = owner
        self.landed = False

    def can_land(self) -> bool:
        return True

    def land(self, machine) -> None:
        raise NotImplementedError

    def describe(self) -> str:
        return self.owner.name


class TmaLoad(PendingOp):
    kind = "tma"

    def __init__(self, issuer, owner, src: GlobalTensor, coords, dst: Region, bar: Mbarrier):
        super().__init__(issuer, owner)
        if src.dtype != dst.dtype:
            raise AsyncOpError(
                f"TMA load from {src.name} ({src.dtype.name}) into {dst.describe()} "
                f"({dst.dtype.name}): element types differ; allocate the buffer with "
                f"dtype {src.dtype.name!r}")
        self.src, self.coords, self.dst, self.bar = src, tuple(coords), dst, bar
        box_slices(src.codes.shape, self.coords, dst.shape)  # rank check at issue

    def land(self, machine) -> None:
        box = np.zeros(self.dst.shape, dtype=self.src.dtype.storage)
        parts = box_slices(self.src.codes.shape, self.coords, self.dst.shape)
        if parts is not None:
            box[parts[1]] = self.src.codes[parts[0]]
        machine.record(self.dst, write=True, proxy="async", owner=self.owner,
                       label=f"TMA load of {self.src.name}{list(self.coords)}")
        if self.dst.exact:
            # where the tensor map's boxes write: TmaBox.smem_image of each column block
            buf, start = self.dst.buffer, self.dst.first_row or 0
            base = buf.offset + (self.dst.stage or 0) * buf.stage_bytes
            addr = tma_image(base, buf.tile_shape, buf.dtype.itemsize, buf.swizzle, start,
                             start + self.dst.shape[0])
            scatter_codes(buf.memory.bytes, addr, box, buf.dtype)
        else:
            self.dst.codes()[...] = box
        self.bar.complete_tx(self.dst.nbytes, clock=self.owner.clock)


class BulkStore(PendingOp):
    kind = "bulk"

    def __init__(self, issuer, owner, src: Region, dst: GlobalTensor, coords):
        super().__init__(issuer, owner)
        if src.dtype != dst.dtype:
            raise AsyncOpError(
                f"TMA store from {src.describe()} ({src.dtype.name}) to {dst.name} "
                f"({dst.dtype.name}): element types differ")
        self.src, self.dst, self.coords = src, dst, tuple(coords)
        box_slices(dst.codes.shape, self.coords, src.shape)

    def land(self, machine) -> None:
        machine.record(self.src, write=False, proxy="async", owner=self.owner,
                       label=f"TMA store to {self.dst.name}{list(self.coords)}")
        parts = box_slices(self.dst.codes.shape, self.coords, self.src.shape)
        if parts is not None:
            self.dst.codes[parts[0]] = self.src.codes()[parts[1]]


class Wgmma(PendingOp):
    kind = "wgmma"

    def __init__(self, issuer, owner, acc: RegisterFragment, a, b: Region, trans_b: bool,
                 previous: "Wgmma | None"):
        super().__init__(issuer, owner)
        self.acc, self.a, self.b, self.trans_b, self.previous = acc, a, b, trans_b, previous
        a_shape = a.shape
        b_shape = b.shape[::-1] if trans_b else b.shape
        if len(a_shape) != 2 or len(b_shape) != 2 or a_shape[1] != b_shape[0] \
                or acc.shape != (a_shape[0], b_shape[1]):
            raise AsyncOpError(
                f"wgmma shapes do not chain: A {a_shape}, B {b_shape} (as K x N), "
                f"accumulator {acc.shape}; need A (M,K), B (K,N) and accumulator (M,N)")
        if isinstance(a, Region) and a.dtype != b.dtype:
            raise AsyncOpError(
                f"wgmma operand types differ: A {a.dtype.name}, B {b.dtype.name}")

    def can_land(self) -> bool:
        return self.previous is None or self.previous.landed

    def land(self, machine) -> None:
        if isinstance(self.a, Region):
            machine.record(self.a, write=False, proxy="async", owner=self.owner,
                           label=f"wgmma read of A")
            a = _operand(self.a, "K")
        else:
            a = self.a._async_logical()
        machine.record(self.b, write=False, proxy="async", owner=self.owner,
                       label=f"wgmma read of B")
        b = _operand(self.b, "K" if self.trans_b else "MN")  # (N, K)
        d = np.matmul(a.astype(np.float32), b.T.astype(np.float32))
        acc = self.acc._async_values()
        if self.acc.layout is not None:  # exact: each register gets its element of D
            d = self.acc.layout.from_logical(d)
        acc[...] = acc + d

    def retire(self) -> None:
        self.acc.in_flight -= 1
        if isinstance(self.a, RegisterFragment):
            self.a.in_flight -= 1


def _operand(region: Region, major: str) -> np.ndarray:
    """An smem operand as wgmma reads it, as an (MN, K) matrix of values. Value mode: the
    row-major tile (K-major: (MN, K) as stored; MN-major: stored (K, MN)). Exact mode:
    the bytes at the addresses its descriptors name (smem_image.operand_addresses)."""
    if not region.exact:
        vals = region.dtype.decode(region.codes())
        return vals if major == "K" else vals.T
    key = (region.buffer.name, region.stage, region.first_row, region.lo)
    addr = operand_addresses(region.pre, major, region.swizzle, region.dtype.itemsize, key)
    return region.dtype.decode(gather_codes(region.buffer.memory.bytes, addr, region.dtype))


@dataclass
class AsyncGroups:
    """commit_group / wait_group(N) for one agent and one kind of async operation."""

    kind: str
    open_ops: list = field(default_factory=list)
    committed: list = field(default_factory=list)  # list of lists of ops, oldest first

    def add(self, op: PendingOp) -> None:
        self.open_ops.append(op)

    def commit(self) -> None:
        self.committed.append(self.open_ops)
        self.open_ops = []

    def pending_groups(self) -> int:
        return sum(1 for g in self.committed if not all(op.landed for op in g))

    def can_wait(self, n: int) -> bool:
        """wait_group(N) may return once every group but the N most recent has landed."""
        older = self.committed[:max(len(self.committed) - n, 0)]
        return all(op.landed for group in older for op in group)

    def retire(self, n: int) -> list[PendingOp]:
        """Remove the groups wait_group(N) guarantees complete; return their ops."""
        cut = max(len(self.committed) - n, 0)
        done = [op for group in self.committed[:cut] for op in group]
        self.committed = self.committed[cut:]
        return done
