"""A read whose box never meets its tensor.

TMA and bounded loads fill elements outside the tensor with zeros, so a tile past the
edge is legal (a tail tile, the last split's k steps). A box that lies outside the tensor
for every size, block and iteration the kernel allows reads nothing but zeros: its
coordinate is off (`tile(L, (BT, E), (tt, 1))` on a tensor of E columns,
`tile(counts, (E,), (-1,))`). Proved over every instance (an unsat query: no instance of
the read, on its path, has an element of the box inside the tensor); a query that cannot
be built is the verifier's defect, reported as tag.internal-error (the kernel unverified). Plain tiles only (a segment's window and a gather's rows have
their own checks)."""

from __future__ import annotations

import z3

from argus.ir.nodes import Op
from argus.verify.finding import Finding
from argus.verify.smt import bv, holds

from .values import GlobalTile

READS = {"load": "src", "tma.load": "src", "indices.load": "src"}


def check(w, op: Op) -> None:
    name = READS.get(op.opcode)
    if name is None or w.phase != "check":
        return
    tile = w.value(op.arg(name))
    if not isinstance(tile, GlobalTile) or tile.window is not None or tile.rows is not None:
        return
    if len(tile.origin) != len(tile.extents) or len(tile.box) != len(tile.extents):
        return
    path = list(w.path)
    try:
        if holds(w.ctx, z3.BoolVal(False), path):
            return                       # the read is never reached: nothing to say
        pos = [z3.BitVec(f"box_pos{i}@{op.loc.line}", 64) for i in range(len(tile.box))]
        meets = z3.And(*[z3.And(z3.ULT(p, b), z3.ULT(bv(o) + p, bv(e)))
                         for p, b, o, e in zip(pos, tile.box, tile.origin, tile.extents)])
        never = holds(w.ctx, z3.Not(meets), path)
    except (z3.Z3Exception, TypeError, ValueError) as err:
        w.rule_crashed(op, err, "off-tensor check")     # visible: the read is not verified
        return
    if never:
        w.findings.append(Finding(
            "tag.off-tensor", "error",
            f"this tile of {tile.tensor} never meets the tensor: for every size and "
            f"iteration its box lies outside {tile.tensor}, so the read gives only zeros",
            tile.loc, op.opcode.replace(".", "_"),
            "check the tile coordinates: tile(X, box, coords) counts in whole boxes "
            "from 0 (coordinate c covers elements c*box .. c*box + box - 1)"))
