"""ldmatrix / stmatrix in value mode: a generic-proxy read (write) of the shared-memory
tile into (from) registers; the logical tile is unchanged (.trans changes which thread
holds which element, not the elements). The per-thread distribution is exact mode's
(argus/interp/exact/matrix.py)."""

from __future__ import annotations

from argus.ir.types import SmemTileType

from ..errors import InterpretError
from ..machine import Region
from ..values import round_to
from ._rule import values


def _region(op, x) -> Region:
    if not isinstance(x, Region):
        raise InterpretError(f"{op.loc}: {op.opcode} needs a shared-memory tile, got "
                             f"{type(x).__name__}")
    return x


def _ldmatrix(agent, op, args):
    return (yield agent.machine.ld_shared(_region(op, op.arg("src", args))))


def _stmatrix(agent, op, args):
    dst, src = _region(op, op.arg("dst", args)), op.arg("src", args)
    t = op.arg("dst").type
    dtype = t.dtype if isinstance(t, SmemTileType) else "fp32"
    yield agent.machine.st_shared(dst, round_to(values(src), dtype))


RULES = {"ldmatrix": _ldmatrix, "stmatrix": _stmatrix}
