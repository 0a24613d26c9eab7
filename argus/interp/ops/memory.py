"""Global tiles, shared-memory views, register fragments, plain loads and stores.

Plain global loads and stores are instructions of the agent (one scheduling point each)
that read or write the tensor's codes directly; shared-memory loads and stores go
through the machine's ld/st.shared so the hazard tracker sees them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from argus.ir.types import SmemTileType

from ..errors import InterpretError
from ..machine import GlobalTensor, Region, RegisterFragment
from ..machine.async_ops import box_slices
from ..machine.instructions import Instruction
from ..values import GlobalTile, round_to
from ._rule import pure, values


def _box_parts(tile: GlobalTile):
    """(tensor slices, box slices) of the in-bounds part of the box, or None."""
    return box_slices(tile.tensor.codes.shape, tile.origin, tile.box)


@dataclass
class GlobalLoad(Instruction):
    """ld.global of a box: out-of-bounds elements read as zero."""
    tile: GlobalTile

    def execute(self, machine, agent):
        out = np.zeros(self.tile.box, dtype=np.float32)
        parts = _box_parts(self.tile)
        if parts is not None:
            out[parts[1]] = self.tile.tensor.dtype.decode(self.tile.tensor.codes[parts[0]])
        return out


@dataclass
class GlobalStore(Instruction):
    """st.global of a box: out-of-bounds elements are dropped; values are rounded."""
    tile: GlobalTile
    values: np.ndarray

    def execute(self, machine, agent):
        parts = _box_parts(self.tile)
        if parts is not None:
            t = self.tile.tensor
            t.codes[parts[0]] = t.dtype.encode(np.asarray(self.values)[parts[1]])


@pure
def _tile(agent, op, args):
    tensor, coords = op.arg("tensor", args), op.args("coords", args)
    box = tuple(op.attrs["box"])
    if not isinstance(tensor, GlobalTensor):
        raise InterpretError(f"{op.loc}: tile of {type(tensor).__name__}, not a global tensor")
    return GlobalTile(tensor, tuple(c * b for c, b in zip(coords, box)), box)


@pure
def _smem_alloc(agent, op, args):
    return agent.block.allocs[id(op)]


@pure
def _smem_stage(agent, op, args):
    buffer, s = op.arg("buffer", args), op.arg("stage", args)
    return buffer.stage(int(s))


@pure
def _smem_tile(agent, op, args):
    view, coords = op.arg("view", args), op.args("coords", args)
    box = tuple(op.attrs["box"])
    if any(c != 0 for c in coords[1:]) or tuple(box[1:]) != tuple(view.shape[1:]):
        raise InterpretError(f"{op.loc}: a shared-memory tile must span whole rows (box "
                             f"{box} of {view.shape} at {tuple(coords)}): only bands of rows "
                             f"are contiguous in the machine model")
    return view.rows(coords[0] * box[0], (coords[0] + 1) * box[0])


@pure
def _frag_alloc(agent, op, args):
    a = op.attrs
    frag = agent.machine.fragment(f"{agent.name}.{op.result.name}", tuple(a["shape"]),
                                  owner=agent.name)
    # registers without an initialiser hold garbage on the GPU: NaN here, so reading
    # them before an assign can never pass a comparison
    init = a.get("init")
    frag.write(np.full(frag.shape, np.nan if init is None else init, dtype=np.float32))
    return frag


@pure
def _frag_assign(agent, op, args):
    dst, src = op.arg("dst", args), op.arg("src", args)
    src = np.broadcast_to(np.asarray(values(src), dtype=np.float32), dst.shape)
    if isinstance(dst, RegisterFragment):
        dst.write(src)
        return None
    raise InterpretError(f"{op.loc}: frag.assign into a value that is not a register "
                         f"fragment ({type(dst).__name__}); assign into a `fragment(...)`")


def column_block(x, op, block):
    cols = int(op.attrs["box"][1])
    data = np.asarray(values(x), dtype=np.float32)
    if not 0 <= int(block) < data.shape[1] // cols:
        raise InterpretError(f"{op.loc}: column block {int(block)} of a fragment of "
                             f"{data.shape[1]} columns in blocks of {cols}")
    return np.array(data[:, int(block) * cols:(int(block) + 1) * cols])


@pure
def _frag_slice(agent, op, args):
    return column_block(op.arg("x", args), op, op.arg("block", args))


def _load(agent, op, args):
    src = op.arg("src", args)
    if isinstance(src, GlobalTile):
        return (yield GlobalLoad(src))
    if isinstance(src, Region):
        return (yield agent.machine.ld_shared(src))
    raise InterpretError(f"{op.loc}: load from {type(src).__name__}")


def _store(agent, op, args):
    dst, src = op.arg("dst", args), op.arg("src", args)
    data = values(src)
    if isinstance(dst, GlobalTile):
        if np.shape(data) != dst.box:
            raise InterpretError(f"{op.loc}: store of shape {np.shape(data)} into a box "
                                 f"{dst.box}; the fragment must match the tile")
        yield GlobalStore(dst, data)
    elif isinstance(dst, Region):
        yield agent.machine.st_shared(dst, round_to(data, _dtype(op.arg("dst"))))
    else:
        raise InterpretError(f"{op.loc}: store into {type(dst).__name__}")


def _dtype(operand):
    return operand.type.dtype if isinstance(operand.type, SmemTileType) else "fp32"


RULES = {"tile": _tile, "smem.alloc": _smem_alloc, "smem.stage": _smem_stage,
         "smem.tile": _smem_tile, "frag.alloc": _frag_alloc, "frag.assign": _frag_assign,
         "frag.slice": _frag_slice, "load": _load, "store": _store}
