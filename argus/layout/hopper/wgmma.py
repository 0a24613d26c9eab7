"""wgmma register fragments: the m64nNk16 accumulator and the register A operand.

All three are built from one warpgroup thread layout: lane%4 picks a column pair (or a
4-byte k group), lane/4 picks a row, warp picks a 16-row band. The value modes then say
how a thread's registers step through the tile (PTX ISA, "Matrix Fragments for
wgmma.mma_async.m64nNk16" and "...m64nNk32").
"""

from __future__ import annotations

from ..layout import Layout
from .tv import TVLayout, TVLayoutError

WGMMA_M = 64
WARPGROUP_THREADS = 128
ACCUMULATOR_NS = tuple(range(8, 257, 8))

# K of one instruction and the element size it implies, by operand element bytes.
K_FOR_ELEMENT_BYTES = {2: 16, 1: 32}


def _thread_modes(bytes_per_lane_group: int, m: int):
    """Lane%4 -> column group of `bytes_per_lane_group` elements, lane/4 -> row, warp -> 16 rows."""
    return (4, 8, 4), (bytes_per_lane_group * m, 1, 16)


def accumulator_name(n: int) -> str:
    """The atom name of the m64nN accumulator layout."""
    return f"wgmma_acc_m64n{n}"


def accumulator_width(name: str) -> int | None:
    """N of an accumulator atom's name (wgmma_acc_m64n<N>), None for any other layout."""
    prefix = accumulator_name(0)[:-1]
    rest = name[len(prefix):] if name.startswith(prefix) else ""
    return int(rest) if rest.isdigit() and int(rest) in ACCUMULATOR_NS else None


def wgmma_accumulator(n: int) -> TVLayout:
    """The f32 accumulator of wgmma m64nNk16: 128 threads x N/2 registers over 64 x N."""
    if n not in ACCUMULATOR_NS:
        raise TVLayoutError(f"wgmma has no m64n{n} shape: N must be a multiple of 8 in "
                            "[8, 256]")
    m = WGMMA_M
    t_shape, t_stride = _thread_modes(2, m)
    # register v: v%2 -> next column, (v/2)%2 -> 8 rows down, v/4 -> next 8-column block
    layout = Layout((t_shape, (2, 2, n // 8)), (t_stride, (m, 8, 8 * m)))
    return TVLayout(accumulator_name(n), layout, (m, n), WARPGROUP_THREADS, n // 2)


def wgmma_a_registers(element_bytes: int) -> TVLayout:
    """The A operand held in registers: 4 x 32-bit registers per thread over 64 x K.

    16-bit types (K = 16): element v is half v%2 of register v/2.
    8-bit types (K = 32): element v is byte v%4 of register v/4.
    """
    if element_bytes not in K_FOR_ELEMENT_BYTES:
        raise TVLayoutError(f"wgmma A from registers takes 16-bit or 8-bit elements, not "
                            f"{element_bytes}-byte ones (tf32 A must come from shared memory)")
    m, k = WGMMA_M, K_FOR_ELEMENT_BYTES[element_bytes]
    per_reg = 4 // element_bytes  # elements packed in one 32-bit register
    t_shape, t_stride = _thread_modes(per_reg, m)
    # within a register: consecutive k; register r: r%2 -> 8 rows down, r/2 -> k + K/2
    layout = Layout((t_shape, (per_reg, 2, 2)), (t_stride, (m, 8, (k // 2) * m)))
    bits = 8 * element_bytes
    return TVLayout(f"wgmma_a_rs_{bits}bit", layout, (m, k), WARPGROUP_THREADS, 4 * per_reg)


def accumulator_slice_is_register_a(element_bytes: int, n: int = 256) -> bool:
    """Does the accumulator restricted to each K-wide column block equal the register A layout?

    This is what lets an attention kernel feed P (an accumulator) back as the A operand
    without shuffles. It holds for 16-bit A (K = 16) and fails for 8-bit A (K = 32): the
    8-bit fragment packs 4 consecutive k per register, the accumulator only 2 columns.
    """
    a = wgmma_a_registers(element_bytes)
    k = a.tile[1]
    if n % k:
        raise TVLayoutError(f"N={n} is not a multiple of the A operand's K={k}")
    acc_rows, acc_cols = wgmma_accumulator(n).coord_table()
    a_rows, a_cols = a.coord_table()
    blocks = n // k
    # registers of thread t in column block j, in register order, as (row, col - j*K)
    for j in range(blocks):
        in_block = (acc_cols // k) == j
        for t in range(a.threads):
            rows, cols = acc_rows[t][in_block[t]], acc_cols[t][in_block[t]] - j * k
            if len(rows) != a.values or (rows != a_rows[t]).any() or (cols != a_cols[t]).any():
                return False
    return True
