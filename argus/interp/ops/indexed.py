"""Indexed global access (memory family): index vectors, row gathers (plain, by TMA, and by
the cp.async of every thread of a warpgroup), row scatters and atomic adds. A row index
outside the tensor reads as zeros and is dropped on writes, like TMA out-of-bounds handling
(padding rows of a routed batch).

`gather_cp_async` runs thread by thread, as the GPU does: each of the warpgroup's 128
threads issues its 16-byte copies (argus.ir.gather_chunks: which rows and chunks are its)
and its cp.async.mbarrier.arrive.noinc; the copies of one thread land together, at a time
the scheduler picks, after every earlier copy of that thread (the arrive tracks all of
them), write their bytes through the generic proxy, and arrive once on the barrier. So the
barrier sees 128 arrivals per warpgroup, and a count that does not expect them is a fault
(too many arrivals) or a deadlock (too few)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from argus.ir import gather_chunks
from argus.limits import WARPGROUP_THREADS

from ..errors import InterpretError
from ..machine.async_ops import PendingOp
from ..machine.instructions import Instruction
from ..machine.memory import scatter_codes
from ..machine.smem_image import swizzled
from ._rule import values
from .memory import GlobalLoad, _box_parts


def _rows_in(tensor, rows):
    rows = np.asarray(rows, dtype=np.int64)
    return rows, (rows >= 0) & (rows < tensor.codes.shape[0])


def _gather_codes(tensor, rows, col, cols):
    """Raw codes of rows[i], columns [col*cols, (col+1)*cols); zero codes out of range."""
    rows, ok = _rows_in(tensor, rows)
    lo = col * cols
    if lo < 0 or lo + cols > tensor.codes.shape[1]:
        raise InterpretError(f"column tile {col} of {cols} columns is outside {tensor.name} "
                             f"with {tensor.codes.shape[1]} columns")
    out = np.zeros((len(rows), cols), dtype=tensor.codes.dtype)
    out[ok] = tensor.codes[rows[ok], lo:lo + cols]
    return out


@dataclass
class GatherLoad(Instruction):
    tensor: object
    rows: np.ndarray
    col: int
    cols: int

    def execute(self, machine, agent):
        return self.tensor.dtype.decode(_gather_codes(self.tensor, self.rows, self.col, self.cols))


@dataclass
class ScatterStore(Instruction):
    tensor: object
    rows: np.ndarray
    col: int
    values: np.ndarray

    def execute(self, machine, agent):
        rows, ok = _rows_in(self.tensor, self.rows)
        if self.tensor.codes.ndim == 1:   # one element per index
            self.tensor.codes[rows[ok]] = self.tensor.dtype.encode(self.values[ok])
            return
        cols = self.values.shape[1]
        lo = self.col * cols
        self.tensor.codes[rows[ok], lo:lo + cols] = self.tensor.dtype.encode(self.values[ok])


@dataclass
class AtomicAdd(Instruction):
    """red.global.add of a box, one instruction (so atomic with respect to other agents)."""
    tile: object
    values: np.ndarray

    def execute(self, machine, agent):
        old = GlobalLoad(self.tile).execute(machine, agent)
        parts = _box_parts(self.tile)
        if parts is not None:
            t = self.tile.tensor
            t.codes[parts[0]] = t.dtype.encode((old + self.values)[parts[1]])


class GatherTma(PendingOp):
    """cp.async.bulk.tensor gather4-style row gather into shared memory: lands later, then
    complete_tx(its bytes) on the barrier."""

    kind = "tma"

    def __init__(self, issuer, owner, tensor, rows, col, dst, bar):
        super().__init__(issuer, owner)
        if tensor.dtype != dst.dtype:
            raise InterpretError(f"gather TMA from {tensor.name} ({tensor.dtype.name}) into "
                                 f"{dst.describe()} ({dst.dtype.name}): element types differ")
        self.tensor, self.rows, self.col, self.dst, self.bar = tensor, rows, col, dst, bar

    def land(self, machine) -> None:
        codes = _gather_codes(self.tensor, self.rows, self.col, self.dst.shape[1])
        machine.record(self.dst, write=True, proxy="async", owner=self.owner,
                       label=f"gather TMA of {self.tensor.name}")
        self.dst.store_codes(codes)
        self.bar.complete_tx(self.dst.nbytes, clock=self.owner.clock)


@dataclass
class GatherTmaIssue(Instruction):
    tensor: object
    rows: np.ndarray
    col: int
    dst: object
    bar: object

    def execute(self, machine, agent):
        owner = machine.async_owner(agent, f"gather TMA {self.tensor.name} -> "
                                           f"{self.dst.describe()} by {agent.name}")
        machine.launch(GatherTma(agent.name, owner, self.tensor, self.rows, self.col,
                                 self.dst, self.bar))


class CpAsyncCopies(PendingOp):
    """One thread's cp.async chunks of a gather, then its cp.async.mbarrier.arrive.noinc:
    the chunks land (16 bytes each, zeros for a row or columns outside the tensor), then the
    thread arrives once on the barrier. It lands only after the thread's previous copies
    (`previous`), which its arrive waits for too."""

    kind = "cp.async"

    def __init__(self, issuer, owner, thread, tensor, chunks, dst, bar, previous):
        super().__init__(issuer, owner)
        self.thread, self.tensor, self.chunks = thread, tensor, chunks
        self.dst, self.bar, self.previous = dst, bar, previous

    def can_land(self) -> bool:
        return self.previous is None or self.previous.landed

    def land(self, machine) -> None:
        dst, t = self.dst, self.tensor
        memory, size = dst.buffer.memory.bytes, dst.dtype.itemsize
        spans = []
        for r, lo, n, src_row, src_col in self.chunks:
            cols = np.arange(src_col, src_col + n)
            codes = np.zeros(n, dtype=t.dtype.storage)
            if 0 <= src_row < t.codes.shape[0]:
                inside = cols < t.codes.shape[1]
                codes[inside] = t.codes[src_row, cols[inside]]
            addr = _tile_addresses(dst, r, lo, n)
            scatter_codes(memory, addr, codes, dst.dtype)
            spans.append((int(addr.min()), int(addr.max()) + size))
        machine.record_spans(spans, dst.describe(), write=True, proxy="generic",
                             owner=self.owner, label=f"cp.async gather of {t.name} by thread "
                             f"{self.thread} of {self.issuer}")
        self.bar.arrive(1, clock=self.owner.clock)


def _tile_addresses(dst, r, lo, n):
    """Byte addresses of elements (r, lo .. lo+n-1) of a shared-memory region: the tile's
    image in exact mode (the swizzle applied), row-major in value mode."""
    if dst.exact:
        return swizzled(dst.swizzle, dst.pre[r, lo:lo + n])
    return dst.lo + (r * dst.shape[1] + np.arange(lo, lo + n)) * dst.dtype.itemsize


@dataclass
class CpAsyncIssue(Instruction):
    """Thread `thread`'s copies of a gather and its arrive (issued; they land later)."""
    thread: int
    tensor: object
    rows: np.ndarray
    col: int
    dst: object
    bar: object

    def execute(self, machine, agent):
        dst, t = self.dst, self.tensor
        per_chunk = gather_chunks.CHUNK_BYTES // dst.dtype.itemsize
        rows, width = dst.shape
        row_bytes = width * dst.dtype.itemsize
        chunks = []
        for i in range(gather_chunks.copies_per_thread(rows, row_bytes)):
            r, c = gather_chunks.chunk_of(self.thread, i, rows, row_bytes)
            lo = c * per_chunk
            chunks.append((r, lo, per_chunk, int(self.rows[r]), self.col * width + lo))
        key = (agent.name, self.thread)
        owner = machine.async_owner(agent, f"cp.async gather {t.name} -> {dst.describe()} "
                                           f"by thread {self.thread} of {agent.name}")
        op = CpAsyncCopies(agent.name, owner, self.thread, t, chunks, dst, self.bar,
                           machine.cp_async_last.get(key))
        machine.cp_async_last[key] = op
        machine.launch(op)


def _indices_load(agent, op, args):
    vals = yield GlobalLoad(op.arg("src", args))
    return np.asarray(vals).astype(np.int64)


def _gather_load(agent, op, args):
    tensor, rows, col = (op.arg(n, args) for n in ("src", "rows", "col"))
    return (yield GatherLoad(tensor, rows, int(col), int(op.attrs["cols"])))


def _gather_tma(agent, op, args):
    dst, tensor, rows, col, bar = (op.arg(n, args) for n in ("dst", "src", "rows", "col", "bar"))
    yield GatherTmaIssue(tensor, np.asarray(rows), int(col), dst, bar)


def _gather_cp_async(agent, op, args):
    dst, tensor, rows, col, bar = (op.arg(n, args) for n in ("dst", "src", "rows", "col", "bar"))
    if agent.elected is not None:
        raise InterpretError(f"{op.loc}: gather_cp_async inside elect_one: every thread of "
                             "the warpgroup must execute it (each copies its own chunks)")
    if tensor.dtype != dst.dtype:
        raise InterpretError(f"{op.loc}: gather from {tensor.name} ({tensor.dtype.name}) into "
                             f"{dst.describe()} ({dst.dtype.name}): element types differ")
    width = dst.shape[1]
    if not 0 <= col * width < tensor.codes.shape[1]:
        raise InterpretError(f"{op.loc}: column tile {col} of {width} columns is outside "
                             f"{tensor.name} with {tensor.codes.shape[1]} columns")
    if tensor.codes.shape[1] * tensor.dtype.itemsize % gather_chunks.CHUNK_BYTES:
        raise InterpretError(f"{op.loc}: rows of {tensor.name} are {tensor.codes.shape[1]} "
                             f"elements, not a multiple of {gather_chunks.CHUNK_BYTES} bytes: "
                             "cp.async cannot copy them 16 bytes at a time")
    rows = np.asarray(rows)
    for thread in range(WARPGROUP_THREADS):
        yield CpAsyncIssue(thread, tensor, rows, int(col), dst, bar)


def _scatter_store(agent, op, args):
    tensor, rows, col, src = (op.arg(n, args) for n in ("dst", "rows", "col", "src"))
    yield ScatterStore(tensor, np.asarray(rows), int(col), np.asarray(values(src)))


def _atomic_add(agent, op, args):
    dst, src = op.arg("dst", args), op.arg("src", args)
    yield AtomicAdd(dst, np.asarray(values(src), dtype=np.float32))


RULES = {"indices.load": _indices_load, "gather.load": _gather_load,
         "gather.tma": _gather_tma, "gather.cp_async": _gather_cp_async,
         "scatter.store": _scatter_store, "atomic.add": _atomic_add}
