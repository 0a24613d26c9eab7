"""Exact-mode ldmatrix / stmatrix (one warp's access; every warp of the warpgroup makes
the same one). Lanes 8i..8i+7 give the addresses of the 8 rows of matrix i: the image
address of row 8i+r of the stacked (8*num) x 8 tile. Each row is 16 contiguous bytes at
that address; the rows are then dealt out to (from) the lanes' registers through the
ldmatrix/stmatrix thread-value atom (`argus.layout.hopper.ldmatrix`), .trans included."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InterpretError
from ..machine import Region, RegisterFragment
from ..machine.instructions import Instruction
from ..machine.memory import gather_codes, scatter_codes
from ..values import round_to
from .fraglayout import FragLayout, frag_layout
from .regs import Regs

ROW_BYTES = 16


def _rows_addresses(region: Region, num: int) -> np.ndarray:
    if tuple(region.shape) != (8 * num, 8):
        raise InterpretError(f"exact mode models ldmatrix/stmatrix .x{num} on an "
                             f"{8 * num}x8 stack of 8x8 matrices; the tile is {region.shape}")
    first = region.addresses()[:, 0]
    return first[:, None] + np.arange(ROW_BYTES // region.dtype.itemsize) * region.dtype.itemsize


@dataclass
class LdMatrix(Instruction):
    src: Region
    layout: FragLayout
    num: int

    def execute(self, machine, agent):
        addr = _rows_addresses(self.src, self.num)
        machine.record(self.src, write=False, proxy="generic", owner=agent.owner,
                       label="ldmatrix")
        rows = self.src.dtype.decode(gather_codes(self.src.buffer.memory.bytes, addr,
                                                  self.src.dtype))
        return Regs(self.layout, self.layout.from_logical(rows))


@dataclass
class StMatrix(Instruction):
    dst: Region
    layout: FragLayout
    regs: np.ndarray
    num: int

    def execute(self, machine, agent):
        addr = _rows_addresses(self.dst, self.num)
        machine.record(self.dst, write=True, proxy="generic", owner=agent.owner,
                       label="stmatrix")
        rows = self.layout.to_logical(self.regs)
        scatter_codes(self.dst.buffer.memory.bytes, addr, self.dst.dtype.encode(rows),
                      self.dst.dtype)


def _atom(op, shape) -> FragLayout:
    name = f"{op.opcode}_x{op.attrs['num']}" + ("_trans" if op.attrs.get("trans") else "")
    return frag_layout(name, tuple(shape))


def _ldmatrix(agent, op, args):
    src = op.arg("src", args)
    if not isinstance(src, Region):
        raise InterpretError(f"{op.loc}: ldmatrix needs a shared-memory tile")
    return (yield LdMatrix(src, _atom(op, src.shape), int(op.attrs["num"])))


def _stmatrix(agent, op, args):
    dst, src = op.arg("dst", args), op.arg("src", args)
    if not isinstance(dst, Region):
        raise InterpretError(f"{op.loc}: stmatrix needs a shared-memory tile")
    atom = _atom(op, dst.shape)
    if isinstance(src, (Regs, RegisterFragment)) and getattr(src, "layout", None) is not None:
        regs = src.read()
    else:
        regs = atom.from_logical(np.asarray(src, np.float32))
    if regs.shape != (atom.threads, atom.values):
        raise InterpretError(f"{op.loc}: stmatrix stores a warp's {atom.threads} x "
                             f"{atom.values} registers ({atom.name}); the fragment holds "
                             f"{regs.shape[0]} x {regs.shape[1]} per (thread, register): "
                             f"convert_layout it to \"{atom.name}\" first")
    regs = round_to(regs, op.arg("dst").type.dtype)
    yield StMatrix(dst, atom, regs, int(op.attrs["num"]))


RULES = {"ldmatrix": _ldmatrix, "stmatrix": _stmatrix}
