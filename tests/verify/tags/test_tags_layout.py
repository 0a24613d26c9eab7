"""The tag pass restates the code generator's shared-memory convention (so that it does
not import the backend); this keeps the two equal, and checks that the z3 inverse of the
TMA image really inverts it, on concrete ints."""

from __future__ import annotations

import itertools

import pytest
import z3

from argus.codegen.smem_tiles import as_operand, stage_geometry
from argus.verify.tags.tma import StageLayout

SHAPES = [((128, 64), 2, "128B"), ((64, 256), 2, "128B"), ((256, 64), 2, "64B"),
          ((64, 128), 2, "32B"), ((128, 128), 1, "128B"), ((64, 64), 2, "none")]


@pytest.mark.parametrize("shape,eb,swizzle", SHAPES)
def test_byte_offsets_match_the_codegen(shape, eb, swizzle):
    ours = StageLayout(shape[0], shape[1], eb, swizzle)
    theirs = stage_geometry(shape, eb, swizzle)
    assert ours.chunk_stride == theirs.chunk_stride and ours.span == theirs.span
    for r, c in itertools.product(range(0, shape[0], 7), range(0, shape[1], 5)):
        assert ours.byte(r, c) == theirs.byte_offset(r, c)


@pytest.mark.parametrize("shape,eb,swizzle", [s for s in SHAPES if s[2] != "none"])
@pytest.mark.parametrize("major", ["K", "MN"])
def test_operands_match_the_codegen(shape, eb, swizzle, major):
    ours = StageLayout(shape[0], shape[1], eb, swizzle).operand(0, shape[0], major)
    theirs = as_operand(stage_geometry(shape, eb, swizzle), major)
    assert (ours.mn, ours.k) == (theirs.mn, theirs.k)
    assert ours.layout == theirs.layout


@pytest.mark.parametrize("shape,eb,swizzle", SHAPES)
def test_element_at_inverts_the_tma_image(shape, eb, swizzle):
    from argus.layout.swizzle import hopper_swizzle
    stage = StageLayout(shape[0], shape[1], eb, swizzle)
    addr = z3.BitVec("addr", 64)
    r, c, ok = stage.element_at(addr)
    swz = hopper_swizzle(swizzle)
    for row, col in [(0, 0), (1, 3), (shape[0] - 1, shape[1] - 1), (5, shape[1] // 2)]:
        byte = swz(stage.byte(row, col))
        sub = [(addr, z3.BitVecVal(byte, 64))]
        got = [z3.simplify(z3.substitute(x, *sub)) for x in (r, c)]
        assert [g.as_long() for g in got] == [row, col]
        assert z3.is_true(z3.simplify(z3.substitute(ok, *sub)))
