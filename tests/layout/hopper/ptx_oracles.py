"""Fragment formulas transcribed from the PTX ISA text, as plain integer arithmetic.

These are the test oracles: written from the ISA's fragment figures and tables, not from
the shape:stride layouts under test.
"""


def wgmma_accumulator(t, v):
    """"Matrix Fragments for wgmma.mma_async.m64nNk16", D: row, col of d[v] in thread t."""
    warp, lane = t // 32, t % 32
    row = 16 * warp + lane // 4 + 8 * ((v // 2) % 2)
    col = 2 * (lane % 4) + (v % 2) + 8 * (v // 4)
    return row, col


def wgmma_a_16bit(t, v):
    """A in registers, 16-bit types: a[v//2] half v%2 -> (row, k) of the 64x16 tile."""
    warp, lane = t // 32, t % 32
    row = 16 * warp + lane // 4 + 8 * ((v // 2) % 2)
    k = 2 * (lane % 4) + (v % 2) + 8 * (v // 4)
    return row, k


def wgmma_a_8bit(t, v):
    """A in registers, 8-bit types (k32): a[v//4] byte v%4 -> (row, k) of the 64x32 tile."""
    warp, lane = t // 32, t % 32
    row = 16 * warp + lane // 4 + 8 * ((v // 4) % 2)
    k = 4 * (lane % 4) + (v % 4) + 16 * (v // 8)
    return row, k


def ldmatrix_element(lane, v, trans):
    """(matrix, row, col) of lane's element v: register v//2, half v%2, m8n8 .b16."""
    matrix, half = v // 2, v % 2
    r, c = lane // 4, 2 * (lane % 4) + half
    return (matrix, c, r) if trans else (matrix, r, c)


def swizzled_byte(addr, swizzle):
    """The Hopper swizzles on absolute byte addresses: 16-byte chunk bits ^= bits 7.. ."""
    bits = {"none": 0, "32B": 1, "64B": 2, "128B": 3}[swizzle]
    mask = (1 << bits) - 1
    return addr ^ (((addr >> 7) & mask) << 4)


def smem_k_major_byte(mn, k, mn_extent, element_bytes, swizzle, base=0):
    """K-major tile: each mn row holds `span` bytes of k per atom; atoms go mn first, then k."""
    span = {"none": 16, "32B": 32, "64B": 64, "128B": 128}[swizzle]
    per_row = span // element_bytes
    atom_column, k_in = divmod(k, per_row)
    addr = base + atom_column * mn_extent * span + mn * span + k_in * element_bytes
    return swizzled_byte(addr, swizzle)


def smem_mn_major_byte(mn, k, k_extent, mn_extent, element_bytes, swizzle, base=0):
    """MN-major tile: each k row holds `span` bytes of mn per atom; atoms go mn first, then k."""
    span = {"none": 16, "32B": 32, "64B": 64, "128B": 128}[swizzle]
    per_row = span // element_bytes
    atom_row, mn_in = divmod(mn, per_row)
    k_group, k_in = divmod(k, 8)
    atoms_along_mn = mn_extent // per_row
    atom = k_group * atoms_along_mn + atom_row
    addr = base + atom * 8 * span + k_in * span + mn_in * element_bytes
    return swizzled_byte(addr, swizzle)
