"""Exact-mode fragments: allocation and assignment per (thread, register), loads that deal
a tile out to the registers through the result's layout, gathers likewise. Stores need no
override: each thread writes the elements its registers hold (`values()` gathers them)."""

from __future__ import annotations

import numpy as np

from ..errors import InterpretError
from ..machine import GlobalTensor, Region, RegisterFragment
from ..ops.indexed import GatherLoad
from ..ops.memory import GlobalLoad, column_block
from ..ops._rule import pure
from ..values import GlobalTile
from .fraglayout import layout_of
from .math import operand_regs
from .regs import Regs


@pure
def _frag_alloc(agent, op, args):
    layout = layout_of(op.result.type)
    frag = agent.machine.fragment(f"{agent.name}.{op.result.name}",
                                  (layout.threads, layout.values), owner=agent.name)
    frag.layout = layout
    init = op.attrs.get("init")
    frag.write(np.full((layout.threads, layout.values), np.nan if init is None else init,
                       dtype=np.float32))
    return frag


@pure
def _frag_assign(agent, op, args):
    dst, src = op.arg("dst", args), op.arg("src", args)
    if not isinstance(dst, RegisterFragment):
        raise InterpretError(f"{op.loc}: frag.assign into a value that is not a register "
                             f"fragment ({type(dst).__name__}); assign into a `fragment(...)`")
    regs = operand_regs(op, src, dst.layout)
    dst.write(np.broadcast_to(regs, (dst.layout.threads, dst.layout.values)))
    return None


@pure
def _frag_slice(agent, op, args):
    layout = layout_of(op.result.type)
    block = column_block(op.arg("x", args), op, op.arg("block", args))
    return Regs(layout, layout.from_logical(block))


def _load(agent, op, args):
    src = op.arg("src", args)
    layout = layout_of(op.result.type)
    if isinstance(src, GlobalTile):
        tile = yield GlobalLoad(src)
    elif isinstance(src, Region):
        tile = yield agent.machine.ld_shared(src)
    else:
        raise InterpretError(f"{op.loc}: load from {type(src).__name__}")
    return Regs(layout, layout.from_logical(tile))


def _gather_load(agent, op, args):
    tensor, rows, col = (op.arg(n, args) for n in ("src", "rows", "col"))
    if not isinstance(tensor, GlobalTensor):
        raise InterpretError(f"{op.loc}: gather from {type(tensor).__name__}")
    tile = yield GatherLoad(tensor, rows, int(col), int(op.attrs["cols"]))
    layout = layout_of(op.result.type)
    return Regs(layout, layout.from_logical(tile))


RULES = {"frag.alloc": _frag_alloc, "frag.assign": _frag_assign, "frag.slice": _frag_slice,
         "load": _load,
         "gather.load": _gather_load}
