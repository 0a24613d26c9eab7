"""Which loops' trip counts the protocol model counts as varying (protocol/model.py): the
linear step formula holds only for trips that are the same in every iteration of the loops
around them; a trip computed from a tile coordinate varies, one from sizes does not, even
where the loop's bounds are strided (a keyed trip symbol) and first met inside the tile
loop."""

from argus.frontend import parse_source
from argus.verify.protocol.model import build

SRC = '''from argus.lang import *


@kernel(grid=(132,), block=128)
def walk(A: Tensor["M", "N", "fp32"], C: Tensor["M", "N", "fp32"]):
    for i, m in schedule(M // 64):
        for j in range(1, N // 64):
            a = load(tile(A, (64, 64), (m, j)), layout="wgmma_acc_m64n64")
            store(tile(C, (64, 64), (m, j)), a)
        for k in range(1, m + 2):
            b = load(tile(A, (64, 64), (m, k)), layout="wgmma_acc_m64n64")
            store(tile(C, (64, 64), (m, k)), b)
'''


def _inner(model, var):
    (where,) = {id(e.where): e.where for e in model.events
                if len(e.where.loops) == 2 and e.where.loops[1].name == var}.values()
    return where


def test_a_trip_from_sizes_is_invariant_and_one_from_the_tile_varies():
    model = build(parse_source(SRC, "walk.py")["walk"])
    sizes, tile = _inner(model, "j"), _inner(model, "k")
    assert not model.varies(sizes.loops[1].trip, sizes.loops[:1])
    assert model.numbered(sizes)
    assert model.varies(tile.loops[1].trip, tile.loops[:1])
    # directly in the schedule's body: numbered by the walked sum of its trips, W + k
    assert model.numbered(tile)
    assert model.walked(tile.loops[0], tile.loops[1].trip) is not None
