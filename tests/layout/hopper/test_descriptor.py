import pytest
from hypothesis import given, strategies as st

from argus.layout.hopper import (DescriptorError, MatrixDescriptor, descriptor_for,
                                 instruction_k, read_layout, smem_operand)

CASES = [(eb, major, sw) for eb in (1, 2, 4) for major in ("K", "MN")
         for sw in ("none", "32B", "64B", "128B") if major == "K" or eb == 2]


def test_encoding_places_each_field():
    # start 0x400, LBO 16 B, SBO 1024 B, 128B swizzle, worked out by hand from the ISA table
    desc = MatrixDescriptor(0x400, 16, 1024, "128B")
    assert desc.encode() == 0x4000_0040_0001_0040
    assert MatrixDescriptor(0, 0, 0, "32B").encode() == 3 << 62
    assert MatrixDescriptor(0, 0, 0, "64B", base_offset=5).encode() == 2 << 62 | 5 << 49
    assert MatrixDescriptor(0x3FFF0, 0, 0, "none").encode() == 0x3FFF


@given(st.integers(0, 2**14 - 1), st.integers(0, 2**14 - 1), st.integers(0, 2**14 - 1),
       st.integers(0, 7), st.sampled_from(["none", "32B", "64B", "128B"]))
def test_decode_inverts_encode(start, lbo, sbo, base, sw):
    desc = MatrixDescriptor(start << 4, lbo << 4, sbo << 4, sw, base)
    assert MatrixDescriptor.decode(desc.encode()) == desc


@pytest.mark.parametrize("kwargs,msg", [
    (dict(start_address=0x408), "not 16-byte aligned"),
    (dict(start_address=1 << 18), "14-bit field"),
    (dict(sbo=-16), "non-negative"),
    (dict(base_offset=8), r"base_offset must be in \[0, 8\)"),
    (dict(swizzle="16B"), "unknown swizzle"),
])
def test_validate_names_the_bad_field(kwargs, msg):
    fields = dict(start_address=0x400, lbo=16, sbo=1024, swizzle="128B")
    fields.update(kwargs)
    with pytest.raises(DescriptorError, match=msg):
        MatrixDescriptor(**fields).encode()


def test_decode_rejects_reserved_bits():
    with pytest.raises(DescriptorError, match="reserved"):
        MatrixDescriptor.decode(1 << 14)


def test_sw128_operand_must_be_1024_aligned_or_have_a_base_offset():
    op = smem_operand(64, 64, 2, "K", "128B", base=512)
    with pytest.raises(DescriptorError, match="1024 B or set base_offset"):
        descriptor_for(op)
    assert descriptor_for(op, base_offset=4).base_offset == 4
    descriptor_for(smem_operand(64, 64, 2, "K", "none", base=512))  # no pattern to align


def test_k_major_sw128_fields():
    op = smem_operand(64, 64, 2, "K", "128B", base=0x2000)
    desc = descriptor_for(op)
    assert (desc.start_address, desc.sbo, desc.swizzle) == (0x2000, 1024, "128B")


@pytest.mark.parametrize("eb", [2, 1])
def test_advance_k_inside_a_sw128_atom_moves_32_bytes(eb):
    op = smem_operand(64, 128 // eb, eb, "K", "128B", base=0x4000)
    first = descriptor_for(op)
    nxt = first.advance_k(instruction_k(eb))
    assert nxt.start_address - first.start_address == 32
    assert (nxt.lbo, nxt.sbo, nxt.swizzle) == (first.lbo, first.sbo, first.swizzle)


def test_advance_k_needs_its_operand():
    with pytest.raises(DescriptorError, match="descriptor_for"):
        MatrixDescriptor(0, 16, 1024, "128B").advance_k(16)
    op = smem_operand(64, 64, 2, "K", "128B")
    with pytest.raises(DescriptorError, match="k16 slice"):
        descriptor_for(op).advance_k(8)


@pytest.mark.parametrize("eb,major,sw", CASES)
def test_hardware_read_equals_layout_for_every_element_and_k_slice(eb, major, sw):
    """The address wgmma reads through the descriptor == the operand layout's address."""
    kk = instruction_k(eb)
    # K-major: two 8-row groups (SBO) and two 128-byte spans of k (crosses SW128 atoms);
    # MN-major: two 128-byte spans of mn (LBO between atoms) and two k16 slices
    mn, k = (16, 256 // eb) if major == "K" else (128, 32)
    op = smem_operand(mn, k, eb, major, sw, base=0x8000)
    desc, k0 = descriptor_for(op), 0
    while True:
        reads = read_layout(MatrixDescriptor.decode(desc.encode()), eb, major, op.mn)
        for m in range(op.mn):
            for k in range(kk):
                assert reads((m, k)) == op.byte_offset(m, k0 + k), (m, k0 + k)
        k0 += kk
        if k0 >= op.k:
            break
        desc = desc.advance_k(kk)


def test_read_model_detects_a_wrong_sbo():
    op = smem_operand(64, 64, 2, "K", "128B")
    good = descriptor_for(op)
    bad = MatrixDescriptor(good.start_address, good.lbo, 512, "128B")
    reads = read_layout(bad, 2, "K", 64)
    assert any(reads((m, 0)) != op.byte_offset(m, 0) for m in range(64))


def test_read_model_refuses_base_offsets():
    with pytest.raises(DescriptorError, match="not modelled"):
        read_layout(MatrixDescriptor(0, 16, 1024, "128B", base_offset=1), 2, "K", 64)
