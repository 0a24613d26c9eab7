import pytest

from argus.layout.hopper import TmaBox, TmaError

from . import ptx_oracles as ptx


def box(**kw):
    fields = dict(element_bytes=2, global_shape=(1000, 300), global_strides=(2, 2048),
                  box=(64, 32), swizzle="128B", global_address=0x10000, smem_address=0x400)
    fields.update(kw)
    return TmaBox(**fields)


@pytest.mark.parametrize("swizzle,inner", [("none", 64), ("32B", 16), ("64B", 32), ("128B", 64)])
def test_smem_image_is_dense_then_swizzled(swizzle, inner):
    b = box(swizzle=swizzle, box=(inner, 16), smem_address=0x800)
    image = b.smem_image()
    assert image.unit == "byte"
    for c1 in range(16):
        for c0 in range(inner):
            dense = 0x800 + 2 * (c0 + inner * c1)
            assert image((c0, c1)) == ptx.swizzled_byte(dense, swizzle)


def test_smem_image_three_dims():
    b = box(global_shape=(64, 8, 4), global_strides=(2, 128, 1024), box=(64, 8, 4))
    image = b.smem_image()
    assert sorted(image((c0, c1, c2)) - 0x400 for c0 in range(64) for c1 in range(8)
                  for c2 in range(4)) == list(range(0, 64 * 8 * 4 * 2, 2))


def test_tx_bytes_count_the_whole_box_even_out_of_bounds():
    b = box(global_shape=(40, 10))
    assert b.tx_bytes == 64 * 32 * 2
    assert not b.in_bounds((0, 0), (40, 0)) and b.in_bounds((0, 0), (39, 9))


@pytest.mark.parametrize("kw,msg", [
    (dict(global_shape=(1,) * 6, global_strides=(2,) + (16,) * 5, box=(8,) * 6), "1 to 5 dims"),
    (dict(box=(64, 257)), r"in \[1, 256\]"),
    (dict(box=(64, 0)), r"in \[1, 256\]"),
    (dict(box=(128, 8)), "wider than the 128-byte span"),
    (dict(box=(4, 8), swizzle="none"), "multiple of 16 B"),
    (dict(global_strides=(2, 2008)), "multiples of 16 B"),
    (dict(global_strides=(4, 2048)), "contiguous"),
    (dict(global_address=0x10008), "16-byte"),
    (dict(smem_address=0x480), "1024-byte"),
    (dict(smem_address=0x440, swizzle="64B", box=(32, 8)), "128-byte"),
    (dict(swizzle="16B"), "unknown swizzle"),
    (dict(box=(64,)), "one entry per dim"),
])
def test_illegal_boxes_are_named(kw, msg):
    with pytest.raises(TmaError, match=msg):
        box(**kw)


def test_legal_64b_box_at_128_byte_smem():
    box(swizzle="64B", box=(32, 8), smem_address=0x480)
