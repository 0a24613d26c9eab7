"""Indexed global access (memory family): index vectors, row gathers (plain and by TMA),
row scatters and atomic adds. A row index outside the tensor reads as zeros and is
dropped on writes, like TMA out-of-bounds handling (padding rows of a routed batch)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InterpretError
from ..machine.async_ops import PendingOp
from ..machine.instructions import Instruction
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


def _indices_load(agent, op, args):
    vals = yield GlobalLoad(op.arg("src", args))
    return np.asarray(vals).astype(np.int64)


def _gather_load(agent, op, args):
    tensor, rows, col = (op.arg(n, args) for n in ("src", "rows", "col"))
    return (yield GatherLoad(tensor, rows, int(col), int(op.attrs["cols"])))


def _gather_tma(agent, op, args):
    dst, tensor, rows, col, bar = (op.arg(n, args) for n in ("dst", "src", "rows", "col", "bar"))
    yield GatherTmaIssue(tensor, np.asarray(rows), int(col), dst, bar)


def _scatter_store(agent, op, args):
    tensor, rows, col, src = (op.arg(n, args) for n in ("dst", "rows", "col", "src"))
    yield ScatterStore(tensor, np.asarray(rows), int(col), np.asarray(values(src)))


def _atomic_add(agent, op, args):
    dst, src = op.arg("dst", args), op.arg("src", args)
    yield AtomicAdd(dst, np.asarray(values(src), dtype=np.float32))


RULES = {"indices.load": _indices_load, "gather.load": _gather_load,
         "gather.tma": _gather_tma, "scatter.store": _scatter_store, "atomic.add": _atomic_add}
