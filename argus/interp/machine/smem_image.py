"""Where each element of a shared-memory tile lives, byte by byte (fragment-exact mode).

The byte models come from `argus.layout.hopper`; this module only evaluates them on NumPy
index grids (one vectorised sum per layout mode instead of one Python call per element):

- `tile_image`: the image of a 2-D tile of a swizzled buffer: the K-major wgmma operand
  layout of `smem_operand` (column blocks one swizzle span wide, each a dense row-major
  band, the swizzle applied to absolute address bits), as the code generator lays it out
  (argus/codegen/smem_tiles.py). Unswizzled tiles and tiles that are not whole atoms
  (1-D, or a row not a multiple of the span) are dense row-major; wgmma cannot read an
  unswizzled row-major operand (its core matrices are 16-byte rows 16 bytes apart), so
  such a read is refused, as the backend refuses it.
- `tma_image`: where a TMA load of a band of rows writes, from `TmaBox.smem_image`: the
  compiler issues one box per column block (a box is at most one swizzle span wide).
- `operand_addresses`: what one wgmma reads, from a descriptor derived from the tile's
  image and `descriptor.read_layout`, slice by k-slice; a tile whose image no descriptor
  describes is refused (wgmma could not read it).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from argus.layout.hopper import MatrixDescriptor, TmaBox, instruction_k, read_layout, smem_operand
from argus.layout.hopper.smem import SWIZZLE_SPAN_BYTES
from argus.layout.int_tuple import flatten
from argus.layout.swizzle import hopper_swizzle

from .errors import MemoryModelError

ATOM_ROWS = 8


def _mode_offsets(shape, stride, extent: int) -> np.ndarray:
    """Offsets of indices 0..extent-1 of one layout mode (colexicographic, first fastest)."""
    x = np.arange(extent, dtype=np.int64)
    out = np.zeros(extent, dtype=np.int64)
    for e, d in zip(flatten(shape), flatten(stride)):
        out += (x % e) * d
        x //= e
    return out


def layout_table(layout, extents) -> np.ndarray:
    """layout(i, j, ...) over the grid of natural coordinates `extents` (a rank-n Layout)."""
    modes = [layout[k] for k in range(len(extents))] if len(extents) > 1 else [layout]
    table = np.zeros(tuple(extents), dtype=np.int64)
    for axis, (mode, n) in enumerate(zip(modes, extents)):
        shape = [1] * len(extents)
        shape[axis] = n
        table = table + _mode_offsets(mode.shape, mode.stride, n).reshape(shape)
    return table


def swizzled(mode: str, addresses: np.ndarray) -> np.ndarray:
    """The Hopper byte swizzle of `mode` applied to absolute byte addresses."""
    sw = hopper_swizzle(mode)
    if sw.is_identity():
        return addresses
    return addresses ^ ((addresses & sw.yyy_mask) >> sw.shift)


def composed_table(composed, extents) -> np.ndarray:
    """swizzle(offset + layout(x)) over a grid (a ComposedLayout of argus.layout)."""
    pre = composed.offset + layout_table(composed.layout, extents)
    sw = composed.swizzle
    return pre if sw.is_identity() else pre ^ ((pre & sw.yyy_mask) >> sw.shift)


def is_atom_tiled(shape, element_bytes: int, swizzle: str) -> bool:
    if len(shape) != 2 or element_bytes not in (1, 2, 4) or swizzle == "none":
        return False
    width = SWIZZLE_SPAN_BYTES[swizzle] // element_bytes
    return shape[0] % ATOM_ROWS == 0 and shape[1] % width == 0


@lru_cache(maxsize=None)
def _tile_image(base: int, shape: tuple, element_bytes: int, swizzle: str) -> np.ndarray:
    if is_atom_tiled(shape, element_bytes, swizzle):
        operand = smem_operand(shape[0], shape[1], element_bytes, "K", swizzle, base)
        pre = operand.layout.offset + layout_table(operand.layout.layout, shape)
    else:
        pre = base + np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) * element_bytes
    pre.setflags(write=False)
    return pre


def tile_image(base: int, shape, element_bytes: int, swizzle: str) -> np.ndarray:
    """Pre-swizzle absolute byte address of every element of a tile starting at `base`."""
    return _tile_image(int(base), tuple(int(d) for d in shape), int(element_bytes), swizzle)


@lru_cache(maxsize=None)
def _tma_image(base: int, shape: tuple, element_bytes: int, swizzle: str, start: int,
               stop: int) -> np.ndarray:
    rows, cols = shape
    span = SWIZZLE_SPAN_BYTES[swizzle]
    width = span // element_bytes
    out = np.zeros((stop - start, cols), dtype=np.int64)
    for j in range(cols // width):
        box = TmaBox(element_bytes, (width, rows), (element_bytes, width * element_bytes),
                     (width, stop - start), swizzle,
                     smem_address=base + j * rows * span + start * span)
        out[:, j * width:(j + 1) * width] = composed_table(box.smem_image(),
                                                           (width, stop - start)).T
    out.setflags(write=False)
    return out


def tma_image(base: int, shape, element_bytes: int, swizzle: str, start: int,
              stop: int) -> np.ndarray:
    """Final (swizzled) addresses that TMA writes for rows [start, stop) of a tile at `base`
    (a whole-atom 2-D tile; other tiles land dense, as `tile_image` says)."""
    shape = tuple(int(d) for d in shape)
    if not is_atom_tiled(shape, element_bytes, swizzle):
        return swizzled(swizzle, tile_image(base, shape, element_bytes, swizzle)[start:stop])
    return _tma_image(int(base), shape, int(element_bytes), swizzle, int(start), int(stop))


def _descriptor(pre: np.ndarray, k0: int, major: str, swizzle: str, element_bytes: int):
    """The descriptor of the k-slice at k0 of a tile with pre-swizzle image `pre`.

    K-major: pre is (mn, k). MN-major: pre is (k, mn) (the tile as stored: k rows)."""
    span = SWIZZLE_SPAN_BYTES[swizzle]
    if major == "K":
        start = int(pre[0, k0])
        sbo = int(pre[ATOM_ROWS, k0] - pre[0, k0]) if pre.shape[0] > ATOM_ROWS else span * 8
        chunk = 16 // element_bytes
        if swizzle == "none":
            lbo = int(pre[0, k0 + chunk] - pre[0, k0]) if pre.shape[1] > k0 + chunk else 16
        else:
            lbo = 16
    else:
        start = int(pre[k0, 0])
        lbo_step = (span if swizzle != "none" else 16) // element_bytes
        far = int(pre[k0, lbo_step] - pre[k0, 0]) if pre.shape[1] > lbo_step else 16
        near = int(pre[k0 + ATOM_ROWS, 0] - pre[k0, 0])
        lbo, sbo = (far, near) if swizzle != "none" else (near, far)
    return MatrixDescriptor(start, lbo, sbo, swizzle)


def operand_addresses(pre: np.ndarray, major: str, swizzle: str, element_bytes: int,
                      key=None) -> np.ndarray:
    """Final byte address wgmma reads for every (mn, k) of an operand tile, k-slice by
    k-slice through its descriptor. `pre` is the tile's pre-swizzle image ((mn, k) for
    K-major, (k, mn) for MN-major); `key` (hashable) names the tile for the cache.
    Raises when the descriptor read and the image differ."""
    key = (key if key is not None else pre.tobytes(), pre.shape, major, swizzle, element_bytes)
    if key in _READS:
        return _READS[key]
    kk = instruction_k(element_bytes)
    mn_extent, k_extent = (pre.shape if major == "K" else pre.shape[::-1])
    image = swizzled(swizzle, pre if major == "K" else pre.T)
    out = np.zeros((mn_extent, k_extent), dtype=np.int64)
    for k0 in range(0, k_extent, kk):
        desc = _descriptor(pre, k0, major, swizzle, element_bytes)
        try:
            read = composed_table(read_layout(desc, element_bytes, major, mn_extent),
                                  (mn_extent, kk))
        except Exception as e:  # DescriptorError, LayoutError: the image is not readable
            raise MemoryModelError(f"wgmma cannot read this {major}-major {swizzle} tile "
                                   f"through a descriptor: {e}") from None
        if not np.array_equal(read, image[:, k0:k0 + kk]):
            raise MemoryModelError(
                f"no wgmma descriptor reads the {major}-major {swizzle} tile of shape "
                f"{pre.shape} as laid out in shared memory (k-slice {k0}); declare the "
                f"buffer with a swizzle its rows fill (swizzle=\"128B\" for 128-byte rows) "
                f"so each operand is whole swizzle atoms")
        out[:, k0:k0 + kk] = read
    out.setflags(write=False)
    _READS[key] = out
    return out


_READS: dict = {}
