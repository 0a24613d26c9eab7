"""The atoms evaluated on z3 bit-vectors: the same function as on ints, and provably injective."""

import pytest
import z3

from argus.layout import Layout, sym_var
from argus.layout.hopper import (TVLayout, get_atom, wgmma_accumulator)
from argus.layout.symbolic import in_range

SMALL_ATOMS = ["wgmma_acc_m64n8", "wgmma_acc_m64n24", "wgmma_a_rs_16bit", "wgmma_a_rs_8bit",
               "ldmatrix_x4", "ldmatrix_x2_trans", "stmatrix_x4_trans"]


@pytest.mark.parametrize("name", SMALL_ATOMS)
def test_symbolic_coord_equals_concrete_on_every_point(name):
    atom = get_atom(name)
    t, v = sym_var("t", atom.threads), sym_var("v", atom.values)
    row, col = atom.coord(t, v)
    assert z3.is_bv(row) and z3.is_bv(col)
    for ti in range(atom.threads):
        for vi in range(atom.values):
            subs = [(t, z3.BitVecVal(ti, t.size())), (v, z3.BitVecVal(vi, v.size()))]
            got = (z3.simplify(z3.substitute(row, *subs)).as_long(),
                   z3.simplify(z3.substitute(col, *subs)).as_long())
            assert got == atom.coord(ti, vi), (ti, vi)


def _collision(atom: TVLayout):
    """A model of two distinct (t, v) in range with the same element, or None."""
    t1, v1 = sym_var("t1", atom.threads), sym_var("v1", atom.values)
    t2, v2 = sym_var("t2", atom.threads), sym_var("v2", atom.values)
    r1, c1 = atom.coord(t1, v1)
    r2, c2 = atom.coord(t2, v2)
    s = z3.Solver()
    s.add(in_range(t1, atom.threads), in_range(t2, atom.threads),
          in_range(v1, atom.values), in_range(v2, atom.values),
          z3.Or(t1 != t2, v1 != v2), r1 == r2, c1 == c2)
    return s.model() if s.check() == z3.sat else None


def test_accumulator_n128_is_injective_by_proof():
    assert _collision(wgmma_accumulator(128)) is None


def test_the_proof_finds_a_collision_in_a_broken_accumulator():
    good = wgmma_accumulator(128)
    (t_shape, v_shape), (t_stride, _) = good.layout.shape, good.layout.stride
    broken = TVLayout("broken", Layout((t_shape, v_shape), (t_stride, (64, 64, 512))),
                      good.tile, good.threads, good.values)  # row-8 register step lost
    assert _collision(broken) is not None


@pytest.mark.parametrize("swizzle", ["none", "64B", "128B"])
def test_smem_operand_and_tma_image_on_z3_terms(swizzle):
    from argus.layout.hopper import TmaBox, smem_operand
    op = smem_operand(16, 64, 2, "K", swizzle, base=2048)
    inner = 32 if swizzle == "64B" else 64
    image = TmaBox(2, (inner, 16), (2, 2 * inner), (inner, 16), swizzle,
                   smem_address=2048).smem_image()
    mn, k = sym_var("mn", 16), sym_var("k", 64)
    op_term = op.byte_offset(mn, k)
    c0 = sym_var("c0", inner)
    image_term = image((c0, mn))
    for m in range(16):
        for kk in range(0, 64, 3):
            subs = [(mn, z3.BitVecVal(m, mn.size())), (k, z3.BitVecVal(kk, k.size())),
                    (c0, z3.BitVecVal(kk % inner, c0.size()))]
            assert z3.simplify(z3.substitute(op_term, *subs)).as_long() == op.byte_offset(m, kk)
            assert (z3.simplify(z3.substitute(image_term, *subs)).as_long()
                    == image((kk % inner, m)))
